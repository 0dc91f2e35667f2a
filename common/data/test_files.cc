#include "common/data/test_files.h"

#include <zlib.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {
namespace testing_util {

std::string WriteTestFile(absl::string_view name, absl::string_view contents, bool gzip) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
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

}  // namespace testing_util
}  // namespace pstrain
