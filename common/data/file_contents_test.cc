#include "common/data/file_contents.h"

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

TEST(FileContentsTest, ReadsPlainAndGzippedFiles) {
  const std::string payload = Payload();
  auto plain = ReadFileContents(WriteTestFile("plain.bin", payload));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, payload);
  auto gzipped = ReadFileContents(WriteTestFile("data.gz", payload, /*gzip=*/true));
  ASSERT_TRUE(gzipped.ok()) << gzipped.status();
  EXPECT_EQ(*gzipped, payload);
}

TEST(FileContentsTest, MissingFileIsNotFound) {
  auto result = ReadFileContents("/nonexistent/folder/file.gz");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("/nonexistent/folder/file.gz"), std::string::npos);
}

TEST(FileContentsTest, TruncatedGzipIsRefused) {
  const std::string path = WriteTestFile("full.gz", Payload(), /*gzip=*/true);
  // Re-read the compressed bytes raw and cut them in half.
  FILE* in = std::fopen(path.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string raw(1 << 20, '\0');
  raw.resize(std::fread(&raw[0], 1, raw.size(), in));
  std::fclose(in);
  const std::string cut = WriteTestFile("cut.gz", raw.substr(0, raw.size() / 2));
  auto result = ReadFileContents(cut);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find("cut.gz"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
