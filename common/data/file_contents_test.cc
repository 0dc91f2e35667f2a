#include "common/data/file_contents.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::WriteTestFile;

std::string Payload() {
  std::string payload;
  for (int i = 0; i < 100000; ++i) payload += static_cast<char>(i * 7 % 251);
  return payload;
}

// The file's bytes as they lie on disk.
std::string ReadRaw(const std::string& path) {
  FILE* in = std::fopen(path.c_str(), "rb");
  EXPECT_NE(in, nullptr) << path;
  if (in == nullptr) return "";
  std::string raw(1 << 20, '\0');
  raw.resize(std::fread(&raw[0], 1, raw.size(), in));
  std::fclose(in);
  return raw;
}

// The process's peak virtual size (VmPeak), in KiB.
int64_t PeakVirtualKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmPeak:", 0) == 0) return std::stoll(line.substr(7));
  }
  ADD_FAILURE() << "no VmPeak in /proc/self/status";
  return 0;
}

TEST(FileContentsTest, ReadsPlainAndGzippedFiles) {
  const std::string payload = Payload();
  auto plain = ReadFileContents(WriteTestFile("plain.bin", payload));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->view(), payload);
  auto gzipped = ReadFileContents(WriteTestFile("data.gz", payload, /*gzip=*/true));
  ASSERT_TRUE(gzipped.ok()) << gzipped.status();
  EXPECT_EQ(gzipped->view(), payload);
}

TEST(FileContentsTest, ReadsPastAWrongSizeHint) {
  // Two gzip members one after the other: the trailer names only the last
  // one's size, so the reader must grow past it.
  const std::string first(300000, 'a');
  const std::string second = Payload();
  std::string joined = ReadRaw(WriteTestFile("first.gz", first, /*gzip=*/true));
  joined += ReadRaw(WriteTestFile("second.gz", second, /*gzip=*/true));
  auto contents = ReadFileContents(WriteTestFile("joined.gz", joined));
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->view(), first + second);
  auto empty = ReadFileContents(WriteTestFile("empty.bin", ""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
}

TEST(FileContentsTest, ATrailerClaimingTooMuchIsOnlyAHint) {
  // The last four bytes (the uncompressed size) say 4 GiB - 1.
  std::string raw = ReadRaw(WriteTestFile("small.gz", "payload", /*gzip=*/true));
  ASSERT_GE(raw.size(), 4u);
  raw.replace(raw.size() - 4, 4, "\xff\xff\xff\xff");
  const std::string lying = WriteTestFile("lying.gz", raw);
  const int64_t peak_before = PeakVirtualKib();
  auto contents = ReadFileContents(lying);
  // zlib checks the trailer against what it inflated and refuses the stream;
  // the buffer was sized from the compressed length, not from the 4 GiB.
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kInvalidArgument) << contents.status();
  EXPECT_LT(PeakVirtualKib() - peak_before, 1 << 20);  // under 1 GiB more
}

TEST(FileContentsTest, MissingFileIsNotFound) {
  auto result = ReadFileContents("/nonexistent/folder/file.gz");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("/nonexistent/folder/file.gz"), std::string::npos);
}

TEST(FileContentsTest, TruncatedGzipIsRefused) {
  const std::string path = WriteTestFile("full.gz", Payload(), /*gzip=*/true);
  // Re-read the compressed bytes raw and cut them in half.
  const std::string raw = ReadRaw(path);
  const std::string cut = WriteTestFile("cut.gz", raw.substr(0, raw.size() / 2));
  auto result = ReadFileContents(cut);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find("cut.gz"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
