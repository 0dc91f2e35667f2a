// Paths and glob patterns expand to the files they name, in order.

#include "common/data/file_patterns.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FilePatternsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/patterns";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/folder.tfrecord");
    for (const char* name : {"part-2.tfrecord", "part-10.tfrecord", "part-1.tfrecord", "notes"}) {
      std::ofstream(dir_ + "/" + name) << name;
    }
  }

  std::string dir_;
};

TEST_F(FilePatternsTest, ExpandsPatternsInNameOrderAndKeepsPathsAsGiven) {
  auto files = ExpandFilePatterns({dir_ + "/notes", dir_ + "/part-*.tfrecord"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre(dir_ + "/notes", dir_ + "/part-1.tfrecord",
                                  dir_ + "/part-10.tfrecord", dir_ + "/part-2.tfrecord"));
  files = ExpandFilePatterns({dir_ + "/part-[12].tfrecord"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre(dir_ + "/part-1.tfrecord", dir_ + "/part-2.tfrecord"));
}

TEST_F(FilePatternsTest, PatternsLeaveOutTheIndexesBesideTheData) {
  std::ofstream(RecordIndexPath(dir_ + "/part-1.tfrecord")) << "index";
  std::ofstream(RecordIndexPath(dir_ + "/part-2.tfrecord") + ".tmp-7") << "being written";
  auto files = ExpandFilePatterns({dir_ + "/part-*"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre(dir_ + "/part-1.tfrecord", dir_ + "/part-10.tfrecord",
                                  dir_ + "/part-2.tfrecord"));
  // Named as it is, an index is what was asked for; a pattern that matches
  // only indexes matches nothing.
  files = ExpandFilePatterns({RecordIndexPath(dir_ + "/part-1.tfrecord")});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre(RecordIndexPath(dir_ + "/part-1.tfrecord")));
  EXPECT_EQ(ExpandFilePatterns({dir_ + "/*.pstrain-index"}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(FilePatternsTest, RefusesWhatMatchesNoFile) {
  for (const std::string& pattern :
       {dir_ + "/missing.tfrecord", dir_ + "/*.csv", dir_ + "/no/such/folder/*"}) {
    auto files = ExpandFilePatterns({dir_ + "/notes", pattern});
    EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound) << files.status();
    EXPECT_THAT(std::string(files.status().message()), HasSubstr(pattern + ": no such file"));
  }
  auto files = ExpandFilePatterns({dir_ + "/*.tfrecord"});
  EXPECT_EQ(files.status().code(), absl::StatusCode::kInvalidArgument) << files.status();
  EXPECT_THAT(std::string(files.status().message()),
              HasSubstr("folder.tfrecord is a folder, not a file"));
}

}  // namespace
}  // namespace pstrain
