#include "client/restart_policy.h"

#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

const ExitStatus kKilled{-1, 9};
const ExitStatus kFailed{1, 0};
const ExitStatus kExitedCleanly{0, 0};

// Jitter 0: the pauses are the nominal ones.
RestartPolicyOptions Options(int max_restarts) {
  RestartPolicyOptions options;
  options.max_restarts = max_restarts;
  options.window = absl::Minutes(10);
  options.backoff.jitter = 0;
  return options;
}

TEST(ParseRestartModeTest, KnowsBothModesAndNamesThemOnAnythingElse) {
  EXPECT_EQ(ParseRestartMode("on-failure").value(), RestartMode::kOnFailure);
  EXPECT_EQ(ParseRestartMode("never").value(), RestartMode::kNever);
  absl::StatusOr<RestartMode> wrong = ParseRestartMode("always");
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status()));
  EXPECT_THAT(wrong.status().message(), HasSubstr("on-failure or never, got 'always'"));
}

TEST(RestartPolicyTest, TheFirstRestartComesAtOnceAndTheNextOnesBackOff) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicy policy(Options(5), clock, random);
  std::vector<absl::Duration> pauses;
  for (int i = 1; i <= 5; ++i) {
    absl::StatusOr<PlannedRestart> restart = policy.OnExit("worker/1", kKilled);
    ASSERT_TRUE(restart.ok()) << restart.status();
    EXPECT_EQ(restart->number, i);
    pauses.push_back(restart->pause);
    clock.Advance(restart->pause + absl::Seconds(1));
  }
  EXPECT_THAT(pauses, ::testing::ElementsAre(absl::ZeroDuration(), absl::Seconds(1),
                                             absl::Seconds(2), absl::Seconds(4), absl::Seconds(8)));
}

TEST(RestartPolicyTest, OneTaskTooManyRestartsWithinTheWindowIsRefusedNamingTheBound) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicy policy(Options(3), clock, random);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(policy.OnExit("ps/0", kFailed).ok());
  // Another task has a budget of its own.
  EXPECT_TRUE(policy.OnExit("worker/0", kKilled).ok());

  absl::StatusOr<PlannedRestart> refused = policy.OnExit("ps/0", kKilled);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("restarted 3 times within 10m, the most --max_restarts=3 allows"));
}

TEST(RestartPolicyTest, RestartsOlderThanTheWindowNoLongerCountAndTheBackoffStartsOver) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicy policy(Options(2), clock, random);
  ASSERT_TRUE(policy.OnExit("evaluator/0", kKilled).ok());
  clock.Advance(absl::Minutes(6));
  ASSERT_EQ(policy.OnExit("evaluator/0", kKilled)->pause, absl::Seconds(1));
  // The first restart leaves the window; the second is still in it.
  clock.Advance(absl::Minutes(5));
  absl::StatusOr<PlannedRestart> third = policy.OnExit("evaluator/0", kKilled);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->number, 3);
  EXPECT_EQ(third->pause, absl::Seconds(2));
  EXPECT_FALSE(policy.OnExit("evaluator/0", kKilled).ok());

  // A whole window without a failure: a fresh start, at once.
  clock.Advance(absl::Minutes(11));
  absl::StatusOr<PlannedRestart> fresh = policy.OnExit("evaluator/0", kKilled);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->number, 4);
  EXPECT_EQ(fresh->pause, absl::ZeroDuration());
}

TEST(RestartPolicyTest, ACleanExitIsNotRestarted) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicy policy(Options(5), clock, random);
  absl::StatusOr<PlannedRestart> refused = policy.OnExit("worker/0", kExitedCleanly);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(refused.status().message(), HasSubstr("a clean exit is as told to"));
}

TEST(RestartPolicyTest, NeverRestartsNothing) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicyOptions options = Options(5);
  options.mode = RestartMode::kNever;
  RestartPolicy policy(options, clock, random);
  absl::StatusOr<PlannedRestart> refused = policy.OnExit("worker/1", kKilled);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_THAT(refused.status().message(), HasSubstr("--restart=never"));
}

TEST(RestartPolicyTest, NoRestartsAllowedRefusesTheFirst) {
  FakeClock clock;
  SeededRandom random(1);
  RestartPolicy policy(Options(0), clock, random);
  EXPECT_FALSE(policy.OnExit("worker/1", kKilled).ok());
}

}  // namespace
}  // namespace pstrain
