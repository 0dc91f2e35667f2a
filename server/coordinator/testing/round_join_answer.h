#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_ROUND_JOIN_ANSWER_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_ROUND_JOIN_ANSWER_H_

// What a test's join of a sync round was answered (RoundKeeper::Join,
// Coordinator::JoinRound), and which workers a shard was told to commit.

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace coordinator {

// One join's answer, once it came. Thread-safe.
struct RoundJoinAnswer {
  absl::Notification answered;
  absl::StatusOr<JoinRoundResponse> answer = absl::UnknownError("not answered");

  // The callback that records the answer into `into`.
  static std::function<void(absl::StatusOr<JoinRoundResponse>)> To(
      std::shared_ptr<RoundJoinAnswer> into) {
    return [into](absl::StatusOr<JoinRoundResponse> response) {
      into->answer = std::move(response);
      into->answered.Notify();
    };
  }

  // The outcome, waiting up to 30 s (real time) for it; a failure of the
  // test when none came or the join was refused.
  RoundJoin outcome() {
    EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30))) << "never answered";
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? answer->outcome() : ROUND_JOIN_UNSPECIFIED;
  }
  // The refusal (or OK), waiting likewise.
  absl::Status status() {
    EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(30))) << "never answered";
    return answer.status();
  }
};

// The workers of a commit's members, in its order.
inline std::vector<int> CommittedWorkers(const CommitRoundRequest& commit) {
  std::vector<int> workers;
  for (const PushId& id : commit.members()) workers.push_back(id.worker());
  return workers;
}

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_ROUND_JOIN_ANSWER_H_
