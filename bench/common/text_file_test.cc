#include "bench/common/text_file.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

std::string ReadBack(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(WriteTextFileTest, ReplacesWhatWasThere) {
  const std::string path = testing::TempDir() + "/spec.pbtxt";
  ASSERT_TRUE(WriteTextFile(path, "a longer first text\n").ok());
  ASSERT_TRUE(WriteTextFile(path, "name: \"x\"\n").ok());
  EXPECT_EQ(ReadBack(path), "name: \"x\"\n");
}

TEST(WriteTextFileTest, NamesAPathItCannotWrite) {
  const absl::Status status = WriteTextFile("/nonexistent-folder/spec.pbtxt", "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("/nonexistent-folder/spec.pbtxt"), std::string::npos) << status;
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
