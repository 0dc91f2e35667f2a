#include "server/coordinator/training_generation.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/clock/fake_clock.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {
namespace {

class TrainingGenerationTest : public ::testing::Test {
 protected:
  std::shared_ptr<ShardGroup> OneShard() { return FakeShardGroup({&shard_}); }

  absl::Status Call(const ShardGroup& shards) {
    return shards.ForEach([](int, ShardClient& client) {
      DropJobRequest request;
      request.set_job_id("job-1");
      return client.DropJob(request);
    });
  }

  FakeClock clock_;
  PosixEnv env_;
  FakeShard shard_{env_, "localhost:1"};
  TrainingGeneration generation_{clock_};
};

TEST_F(TrainingGenerationTest, EachGenerationIsAboveEveryEarlierOneEvenWhenTheClockStands) {
  EXPECT_EQ(generation_.number(), 0u);
  generation_.Connect(OneShard(), {5});
  const uint64_t first = generation_.number();
  EXPECT_EQ(first, static_cast<uint64_t>(absl::ToUnixMicros(clock_.Now())));
  generation_.Renew({6});
  EXPECT_EQ(generation_.number(), first + 1);
  clock_.Advance(absl::Seconds(1));
  generation_.Renew({7});
  EXPECT_EQ(generation_.number(), static_cast<uint64_t>(absl::ToUnixMicros(clock_.Now())));
}

TEST_F(TrainingGenerationTest, OnlyTheLossOfAProcessTheRunLivesInCosts) {
  // Before the shards are connected, any process of theirs holds the set-up.
  EXPECT_TRUE(generation_.Loses(0, 99));
  generation_.Connect(OneShard(), {5});
  EXPECT_TRUE(generation_.Loses(0, 5));
  EXPECT_FALSE(generation_.Loses(0, 4));  // a predecessor, dealt with already

  generation_.MarkLost("ps/0 missed its heartbeats");
  generation_.MarkLost("ps/0 was replaced");
  EXPECT_EQ(generation_.lost(), "ps/0 missed its heartbeats");
  generation_.Renew({6});
  EXPECT_EQ(generation_.lost(), std::nullopt);
  EXPECT_FALSE(generation_.Loses(0, 5));
  EXPECT_TRUE(generation_.Loses(0, 6));

  generation_.MarkDone();
  EXPECT_FALSE(generation_.Loses(0, 6));
}

TEST_F(TrainingGenerationTest, CancelAllReachesShardsConnectedLater) {
  generation_.CancelAll();
  generation_.Connect(OneShard(), {5});
  EXPECT_TRUE(absl::IsCancelled(Call(*generation_.shards())));
}

TEST_F(TrainingGenerationTest, CancelAllCancelsTheConnectedShards) {
  generation_.Connect(OneShard(), {5});
  ASSERT_TRUE(Call(*generation_.shards()).ok());
  generation_.CancelAll();
  EXPECT_TRUE(absl::IsCancelled(Call(*generation_.shards())));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
