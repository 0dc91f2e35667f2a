#include "common/summary/event_file_reader.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "common/summary/event_file_writer.h"
#include "common/summary/record_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class EventFileReaderTest : public ::testing::Test {
 protected:
  EventFileReaderTest() : dir_(NewTestDir(env_)) {}

  // An event file of the version event and three scalars; returns its path.
  std::string WriteEvents() {
    absl::StatusOr<std::unique_ptr<EventFileWriter>> writer =
        EventFileWriter::Create(&env_, dir_, "h");
    EXPECT_TRUE(writer.ok()) << writer.status();
    for (int step = 1; step <= 3; ++step) {
      EXPECT_TRUE(
          (*writer)->WriteEvent(ScalarEvent(step, "loss", step, absl::FromUnixSeconds(9))).ok());
    }
    EXPECT_TRUE((*writer)->Close().ok());
    return (*writer)->path();
  }

  PosixEnv env_;
  const std::string dir_;
};

TEST_F(EventFileReaderTest, ReadsScalarsBack) {
  const absl::StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(env_, WriteEvents());
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_THAT(ScalarsFromEvents(*events),
              ElementsAre(ScalarRecord{1, 9, "loss", 1}, ScalarRecord{2, 9, "loss", 2},
                          ScalarRecord{3, 9, "loss", 3}));
}

TEST_F(EventFileReaderTest, CorruptedRecordIsRefusedNamingFileAndOffset) {
  const std::string path = WriteEvents();
  const std::string contents = *ReadWholeFile(env_, path, 1 << 20);
  // The third record (second scalar) starts after the version event and one
  // scalar; flip a byte in its data.
  absl::StatusOr<std::vector<tensorflow::Event>> good = ReadEventFile(env_, path);
  ASSERT_TRUE(good.ok());
  const int64_t third = static_cast<int64_t>(FrameRecord((*good)[0].SerializeAsString()).size() +
                                             FrameRecord((*good)[1].SerializeAsString()).size());
  ASSERT_TRUE(FlipBit(env_, path, third + kRecordHeaderBytes + 3).ok());

  const absl::StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(env_, path);
  ASSERT_TRUE(absl::IsDataLoss(events.status())) << events.status();
  EXPECT_THAT(events.status().message(),
              AllOf(HasSubstr(path), HasSubstr(absl::StrCat("offset ", third))));
  EXPECT_LT(third, static_cast<int64_t>(contents.size()));
}

TEST_F(EventFileReaderTest, RecordThatIsNotAnEventIsDataLoss) {
  const std::string path = dir_ + "/events.out.tfevents.1.h";
  ASSERT_TRUE(WriteTestFile(env_, path, FrameRecord("\xff\xff\xff")).ok());
  const absl::StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(env_, path);
  ASSERT_TRUE(absl::IsDataLoss(events.status())) << events.status();
  EXPECT_THAT(events.status().message(), HasSubstr("offset 0 is not a tensorflow.Event"));
}

TEST_F(EventFileReaderTest, TruncatedTailCanBeTolerated) {
  const std::string path = WriteEvents();
  const std::string contents = *ReadWholeFile(env_, path, 1 << 20);
  ASSERT_TRUE(WriteTestFile(env_, path, contents.substr(0, contents.size() - 2)).ok());
  EXPECT_TRUE(absl::IsDataLoss(ReadEventFile(env_, path).status()));
  RecordReaderOptions tolerant;
  tolerant.allow_truncated_tail = true;
  const absl::StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(env_, path, tolerant);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(ScalarsFromEvents(*events).size(), 2u);
}

TEST_F(EventFileReaderTest, ListsEventFilesOnly) {
  const std::string path = WriteEvents();
  ASSERT_TRUE(WriteTestFile(env_, dir_ + "/scalars.jsonl", "").ok());
  EXPECT_THAT(*ListEventFiles(env_, dir_), ElementsAre(path));
  EXPECT_THAT(*ListEventFiles(env_, dir_ + "/none"), IsEmpty());
  EXPECT_TRUE(absl::IsNotFound(ReadEventFile(env_, dir_ + "/none").status()));
}

}  // namespace
}  // namespace pstrain
