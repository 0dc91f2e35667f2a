#include "common/summary/event_file_writer.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "common/summary/event_file_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;

class EventFileWriterTest : public ::testing::Test {
 protected:
  EventFileWriterTest() : env_(&posix_, absl::FromUnixMillis(1700000000250)) {
    dir_ = NewTestDir(env_) + "/train";
  }

  PosixEnv posix_;
  TestEnv env_;
  std::string dir_;
};

TEST_F(EventFileWriterTest, WritesTheVersionEventThenScalars) {
  absl::StatusOr<std::unique_ptr<EventFileWriter>> writer =
      EventFileWriter::Create(&env_, dir_, "host-1");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->path(), dir_ + "/events.out.tfevents.1700000000.host-1");

  env_.AdvanceTime(absl::Milliseconds(500));
  ASSERT_TRUE((*writer)->WriteEvent(ScalarEvent(100, "loss", 0.5, env_.Now())).ok());
  ASSERT_TRUE((*writer)->WriteEvent(ScalarEvent(200, "loss", 0.0, env_.Now())).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*writer)->WriteEvent(tensorflow::Event())));

  const absl::StatusOr<std::vector<tensorflow::Event>> events =
      ReadEventFile(env_, (*writer)->path());
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  EXPECT_DOUBLE_EQ((*events)[0].wall_time(), 1700000000.25);
  EXPECT_EQ((*events)[1].step(), 100);
  EXPECT_DOUBLE_EQ((*events)[1].wall_time(), 1700000000.75);
  ASSERT_EQ((*events)[1].summary().value_size(), 1);
  EXPECT_EQ((*events)[1].summary().value(0).tag(), "loss");
  EXPECT_EQ((*events)[1].summary().value(0).simple_value(), 0.5f);
  // A zero is still a value TensorBoard sees.
  EXPECT_TRUE((*events)[2].summary().value(0).has_simple_value());

  EXPECT_THAT(ScalarsFromEvents(*events),
              ElementsAre(ScalarRecord{100, 1700000000.75, "loss", 0.5},
                          ScalarRecord{200, 1700000000.75, "loss", 0.0}));
}

TEST_F(EventFileWriterTest, VersionEventIsVisibleBeforeAnyFlush) {
  absl::StatusOr<std::unique_ptr<EventFileWriter>> writer =
      EventFileWriter::Create(&env_, dir_, "h");
  ASSERT_TRUE(writer.ok()) << writer.status();
  const absl::StatusOr<std::vector<tensorflow::Event>> events =
      ReadEventFile(env_, (*writer)->path());
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
}

TEST_F(EventFileWriterTest, WritersInTheSameSecondGetTheirOwnFiles) {
  absl::StatusOr<std::unique_ptr<EventFileWriter>> first =
      EventFileWriter::Create(&env_, dir_, "h");
  absl::StatusOr<std::unique_ptr<EventFileWriter>> second =
      EventFileWriter::Create(&env_, dir_, "h");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*second)->path(), (*first)->path() + ".1");
  EXPECT_THAT(*ListEventFiles(env_, dir_), ElementsAre((*first)->path(), (*second)->path()));
}

TEST_F(EventFileWriterTest, RefusesHostNamesThatAreNotFileNameParts) {
  EXPECT_TRUE(absl::IsInvalidArgument(EventFileWriter::Create(&env_, dir_, "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(EventFileWriter::Create(&env_, dir_, "a/b").status()));
}

TEST(EventTest, ScalarEventIsTensorBoardsWireFormat) {
  // Field numbers of TensorFlow's event.proto and summary.proto:
  // Event{wall_time=1 double, step=2 varint, summary=5},
  // Summary{value=1}, Value{tag=1, simple_value=2 float}.
  const tensorflow::Event event = ScalarEvent(3, "t", 1.0, absl::FromUnixSeconds(2));
  const std::string expected = std::string("\x09\x00\x00\x00\x00\x00\x00\x00\x40", 9) +  // 2.0
                               std::string("\x10\x03", 2) +                              // step
                               std::string("\x2a\x0a\x0a\x08\x0a\x01t\x15\x00\x00\x80\x3f", 12);
  EXPECT_EQ(event.SerializeAsString(), expected);
}

TEST(EventTest, LocalHostnameIsUsable) {
  const std::string name = LocalHostname();
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(name.find('/'), std::string::npos);
}

}  // namespace
}  // namespace pstrain
