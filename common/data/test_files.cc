#include "common/data/test_files.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {
namespace testing_util {

std::string WriteTestFile(absl::string_view name, absl::string_view contents, bool gzip) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (gzip) {
    gzFile out = gzopen(path.c_str(), "wb");
    CHECK(out != nullptr) << path;
    CHECK_EQ(gzwrite(out, contents.data(), contents.size()), static_cast<int>(contents.size()));
    CHECK_EQ(gzclose(out), Z_OK);
  } else {
    FILE* out = std::fopen(path.c_str(), "wb");
    CHECK(out != nullptr) << path;
    CHECK_EQ(std::fwrite(contents.data(), 1, contents.size(), out), contents.size());
    CHECK_EQ(std::fclose(out), 0);
  }
  return path;
}

namespace {

std::string BigEndian(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
}

void WriteToySplit(const std::string& prefix, int count, uint32_t seed) {
  std::string images = BigEndian(0x803) + BigEndian(count) + BigEndian(6) + BigEndian(6);
  std::string labels = BigEndian(0x801) + BigEndian(count);
  uint32_t noise = seed;
  for (int i = 0; i < count; ++i) {
    const int c = i % 3;
    labels += static_cast<char>(c);
    for (int p = 0; p < 36; ++p) {
      noise = noise * 1103515245 + 12345;
      const int lit = (p / 6) / 2 == c ? 160 : 0;
      images += static_cast<char>(lit + (noise >> 16) % 90);
    }
  }
  WriteTestFile(prefix + "-images-idx3-ubyte.gz", images, true);
  WriteTestFile(prefix + "-labels-idx1-ubyte.gz", labels, true);
}

}  // namespace

std::string WriteToyImageDataset(int train_count, int test_count) {
  WriteToySplit("train", train_count, 12345);
  WriteToySplit("t10k", test_count, 54321);
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

}  // namespace testing_util
}  // namespace pstrain
