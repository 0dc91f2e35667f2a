#include "server/coordinator/global_step.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TEST(GlobalStepTest, RaisedToTheVersionsTheShardsApplied) {
  GlobalStep step(10);
  EXPECT_EQ(step.value(), 10);
  EXPECT_EQ(step.RaiseTo(14).value(), 14);
  // A report retried after a lost answer counts nothing twice.
  EXPECT_EQ(step.RaiseTo(14).value(), 14);
  // An older version seen by a slower worker takes nothing back.
  EXPECT_EQ(step.RaiseTo(12).value(), 14);
  EXPECT_EQ(step.RaiseTo(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), 14);
}

TEST(GlobalStepTest, GoesBackOnlyOnRestore) {
  GlobalStep step(500);
  ASSERT_TRUE(step.RestoreTo(300).ok());
  EXPECT_EQ(step.value(), 300);
  // The restored shards count on from the checkpoint's step.
  EXPECT_EQ(step.RaiseTo(305).value(), 305);
  EXPECT_EQ(step.RestoreTo(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), 305);
}

TEST(GlobalStepTest, ConcurrentReportsKeepTheHighest) {
  GlobalStep step;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&step, w] {
      for (int64_t version = w; version <= 4000; version += 4) {
        ASSERT_TRUE(step.RaiseTo(version).ok());
      }
    });
  }
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(step.value(), 4000);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
