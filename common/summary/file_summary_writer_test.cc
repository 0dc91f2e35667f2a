#include "common/summary/file_summary_writer.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/summary/event_file_reader.h"
#include "common/summary/scalar_jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

class FileSummaryWriterTest : public ::testing::Test {
 protected:
  FileSummaryWriterTest() : env_(&posix_, absl::FromUnixSeconds(1700000000)) {
    model_dir_ = NewTestDir(env_);
  }

  std::unique_ptr<FileSummaryWriter> Open(const std::string& dir,
                                          absl::Duration flush_interval = absl::ZeroDuration()) {
    FileSummaryWriterOptions options;
    options.hostname = "worker-0";
    options.flush_interval = flush_interval;
    absl::StatusOr<std::unique_ptr<FileSummaryWriter>> writer =
        FileSummaryWriter::Open(&env_, dir, options);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }

  std::vector<ScalarRecord> EventScalars(const std::string& path,
                                         RecordReaderOptions options = {}) {
    const absl::StatusOr<std::vector<tensorflow::Event>> events =
        ReadEventFile(env_, path, options);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? ScalarsFromEvents(*events) : std::vector<ScalarRecord>();
  }

  PosixEnv posix_;
  TestEnv env_;
  std::string model_dir_;
};

TEST_F(FileSummaryWriterTest, WritesBothSinksAndReadsThemBack) {
  const std::string dir = TrainSummaryDir(model_dir_);
  EXPECT_EQ(dir, model_dir_ + "/train");
  EXPECT_EQ(EvalSummaryDir(model_dir_), model_dir_ + "/eval");
  std::unique_ptr<FileSummaryWriter> writer = Open(dir);
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(writer->event_file_path(), dir + "/events.out.tfevents.1700000000.worker-0");
  EXPECT_EQ(writer->jsonl_path(), dir + "/scalars.jsonl");

  ASSERT_TRUE(writer->WriteScalar(100, "loss", 0.75).ok());
  env_.AdvanceTime(absl::Milliseconds(1500));
  ASSERT_TRUE(writer->WriteScalar(100, "examples_per_sec", 2048).ok());
  ASSERT_TRUE(writer->WriteScalar(200, "loss", 0.5).ok());
  ASSERT_TRUE(writer->Close().ok());

  const std::vector<ScalarRecord> expected = {
      {100, 1700000000.0, "loss", 0.75},
      {100, 1700000001.5, "examples_per_sec", 2048},
      {200, 1700000001.5, "loss", 0.5},
  };
  EXPECT_EQ(EventScalars(writer->event_file_path()), expected);
  const absl::StatusOr<std::vector<ScalarRecord>> lines =
      ReadScalarJsonl(env_, writer->jsonl_path());
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(*lines, expected);
}

TEST_F(FileSummaryWriterTest, FlushMakesScalarsVisibleWhileOpen) {
  std::unique_ptr<FileSummaryWriter> writer = Open(EvalSummaryDir(model_dir_));
  ASSERT_TRUE(writer->WriteScalar(5, "accuracy", 0.8).ok());
  ASSERT_TRUE(writer->Flush().ok());
  EXPECT_THAT(EventScalars(writer->event_file_path()), SizeIs(1));
  EXPECT_THAT(*ReadScalarJsonl(env_, writer->jsonl_path()), SizeIs(1));
}

TEST_F(FileSummaryWriterTest, FlushesPeriodicallyWhileIdle) {
  std::unique_ptr<FileSummaryWriter> writer =
      Open(TrainSummaryDir(model_dir_), absl::Milliseconds(20));
  ASSERT_TRUE(writer->WriteScalar(1, "loss", 1).ok());
  // No Flush call: the background flush has to make the line appear.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (;;) {
    const absl::StatusOr<std::vector<ScalarRecord>> lines =
        ReadScalarJsonl(env_, writer->jsonl_path());
    ASSERT_TRUE(lines.ok()) << lines.status();
    if (!lines->empty()) break;
    ASSERT_LT(absl::Now(), deadline) << "scalars were not flushed within 30 s";
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_THAT(EventScalars(writer->event_file_path()), SizeIs(1));
}

TEST_F(FileSummaryWriterTest, ReopeningAppendsLinesAndStartsANewEventFile) {
  const std::string dir = TrainSummaryDir(model_dir_);
  std::unique_ptr<FileSummaryWriter> first = Open(dir);
  ASSERT_TRUE(first->WriteScalar(1, "loss", 1).ok());
  ASSERT_TRUE(first->Close().ok());
  // A crash in a later run's write left half a line.
  ASSERT_TRUE(posix_.NewAppendableFile(first->jsonl_path()).value()->Append("{\"step\":2,").ok());

  env_.AdvanceTime(absl::Seconds(60));
  std::unique_ptr<FileSummaryWriter> second = Open(dir);
  ASSERT_TRUE(second->WriteScalar(3, "loss", 0.5).ok());
  ASSERT_TRUE(second->Close().ok());

  EXPECT_NE(second->event_file_path(), first->event_file_path());
  EXPECT_THAT(*ListEventFiles(env_, dir),
              ElementsAre(first->event_file_path(), second->event_file_path()));
  const absl::StatusOr<std::vector<ScalarRecord>> lines =
      ReadScalarJsonl(env_, second->jsonl_path());
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre(ScalarRecord{1, 1700000000, "loss", 1},
                                  ScalarRecord{3, 1700000060, "loss", 0.5}));
}

TEST_F(FileSummaryWriterTest, ConcurrentWritersLoseNothing) {
  std::unique_ptr<FileSummaryWriter> writer =
      Open(TrainSummaryDir(model_dir_), absl::Milliseconds(1));
  constexpr int kThreads = 4;
  constexpr int kScalarsPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&writer, t] {
      for (int i = 0; i < kScalarsPerThread; ++i) {
        EXPECT_TRUE(writer->WriteScalar(i, absl::StrCat("thread", t), i).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_THAT(EventScalars(writer->event_file_path()), SizeIs(kThreads * kScalarsPerThread));
  EXPECT_THAT(*ReadScalarJsonl(env_, writer->jsonl_path()), SizeIs(kThreads * kScalarsPerThread));
}

TEST_F(FileSummaryWriterTest, RefusesBadTagsAndWritesAfterClose) {
  std::unique_ptr<FileSummaryWriter> writer = Open(TrainSummaryDir(model_dir_));
  EXPECT_TRUE(absl::IsInvalidArgument(writer->WriteScalar(1, "", 1)));
  EXPECT_TRUE(absl::IsInvalidArgument(writer->WriteScalar(1, "a\nb", 1)));
  EXPECT_TRUE(absl::IsInvalidArgument(writer->WriteScalar(1, "caf\xc3\xa9", 1)));
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_TRUE(writer->Close().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(writer->WriteScalar(1, "loss", 1)));
  EXPECT_TRUE(absl::IsFailedPrecondition(writer->Flush()));
}

TEST_F(FileSummaryWriterTest, AFailingSinkIsReportedAndTheOtherStillWritten) {
  std::unique_ptr<FileSummaryWriter> writer = Open(TrainSummaryDir(model_dir_));
  env_.FailOn(EnvOp::kAppend, "scalars.jsonl", absl::ResourceExhaustedError("disk full"));
  EXPECT_TRUE(absl::IsResourceExhausted(writer->WriteScalar(1, "loss", 1)));
  env_.ClearFailures();
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_THAT(EventScalars(writer->event_file_path()), SizeIs(1));
}

TEST_F(FileSummaryWriterTest, DestructorClosesAndKeepsEverything) {
  std::string events;
  {
    std::unique_ptr<FileSummaryWriter> writer = Open(TrainSummaryDir(model_dir_));
    ASSERT_TRUE(writer->WriteScalar(1, "loss", 1).ok());
    events = writer->event_file_path();
  }
  EXPECT_THAT(EventScalars(events), SizeIs(1));
}

}  // namespace
}  // namespace pstrain
