#include "client/scale_request.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ScaleRequestTest, ARequestReadsBackAsWritten) {
  ScaleRequest request;
  request.workers = 3;
  request.grace = absl::Milliseconds(2500);
  EXPECT_EQ(FormatScaleRequest(request), "workers=3\ngrace_secs=2.5\n");
  absl::StatusOr<ScaleRequest> parsed = ParseScaleRequest(FormatScaleRequest(request));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->workers, 3);
  EXPECT_EQ(parsed->grace, absl::Milliseconds(2500));
}

TEST(ScaleRequestTest, WithoutAGraceAWorkerGetsKubernetesDefault) {
  absl::StatusOr<ScaleRequest> parsed = ParseScaleRequest("workers=1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->grace, absl::Seconds(30));
}

TEST(ScaleRequestTest, RefusesWorkerCountsOutsideOneToTheBound) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"workers=0", "scale request: a cluster needs at least 1 worker, asked for 0"},
           {"workers=-2", "scale request: a cluster needs at least 1 worker, asked for -2"},
           {"workers=65", "scale request: at most 64 workers on one machine, asked for 65"},
           {"workers=2\ngrace_secs=-1", "scale request: the grace must be >= 0, got -1s"}}) {
    absl::StatusOr<ScaleRequest> parsed = ParseScaleRequest(text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(parsed.status().message(), message) << text;
  }
  ScaleRequest most;
  most.workers = kMaxLocalWorkers;
  EXPECT_TRUE(CheckScaleRequest(most).ok());
}

TEST(ScaleRequestTest, RefusesTextThatIsNoRequest) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "scale request: no workers=N line"},
           {"grace_secs=3\n", "scale request: no workers=N line"},
           {"workers=three", "scale request: workers 'three' is not a whole number"},
           {"workers=2\ngrace_secs=soon", "scale request: grace_secs 'soon' is not a number"},
           {"workers=2\nps=3", "scale request: unknown key 'ps'"},
           {"workers 2", "scale request: line 'workers 2' is not key=value"},
           {"=2", "scale request: line '=2' is not key=value"}}) {
    absl::StatusOr<ScaleRequest> parsed = ParseScaleRequest(text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(parsed.status().message(), message) << text;
  }
}

TEST(ScaleAnswerTest, AnAnswerReadsBackWithItsChangesInOrder) {
  ScaleAnswer answer;
  answer.workers = 3;
  answer.changes = {"worker/2 joined: started (pid 12) at 127.0.0.1:5; log a=b/worker-2.log",
                    "worker/3 joined: ..."};
  absl::StatusOr<ScaleAnswer> parsed = ParseScaleAnswer(FormatScaleAnswer(answer));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->result.ok());
  EXPECT_EQ(parsed->workers, 3);
  EXPECT_EQ(parsed->changes, answer.changes);
}

TEST(ScaleAnswerTest, AFailureKeepsItsCodeAndMessageOnOneLine) {
  ScaleAnswer answer;
  answer.result = absl::DeadlineExceededError("worker/4 did not start\n--- end of log ---");
  answer.workers = 4;
  answer.changes = {"worker/3 joined: ..."};
  absl::StatusOr<ScaleAnswer> parsed = ParseScaleAnswer(FormatScaleAnswer(answer));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->result.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(parsed->result.message(), "worker/4 did not start --- end of log ---");
  EXPECT_EQ(parsed->workers, 4);
  EXPECT_EQ(parsed->changes.size(), 1u);
}

TEST(ScaleAnswerTest, TextThatIsNoAnswerIsDataLoss) {
  for (const std::string text : {"", "workers=2\n", "code=99\n", "code=0\nsmile=yes\n", "oops"}) {
    EXPECT_EQ(ParseScaleAnswer(text).status().code(), absl::StatusCode::kDataLoss) << text;
  }
}

}  // namespace
}  // namespace pstrain
