#include "server/coordinator/checkpoint_feed.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

CheckpointInfo Checkpoint(int64_t step, bool final = false) {
  CheckpointInfo info;
  info.set_step(step);
  info.set_final(final);
  return info;
}

std::vector<int64_t> Steps(const CheckpointFeed::Read& read) {
  std::vector<int64_t> steps;
  for (const CheckpointInfo& info : read.checkpoints) steps.push_back(info.step());
  return steps;
}

TEST(CheckpointFeedTest, AWatcherReadsWhatIsNewerThanItsPosition) {
  CheckpointFeed feed;
  feed.Add(Checkpoint(100));
  feed.Add(Checkpoint(200));
  FeedPosition position;
  CheckpointFeed::Read read = feed.ReadAfter(position, [] {});
  EXPECT_EQ(Steps(read), (std::vector<int64_t>{100, 200}));
  for (const CheckpointInfo& info : read.checkpoints) CheckpointFeed::Advance(position, info);
  EXPECT_EQ(position.step, 200);

  int woken = 0;
  read = feed.ReadAfter(position, [&] { ++woken; });
  EXPECT_TRUE(read.checkpoints.empty());
  EXPECT_NE(read.wait_id, 0u);
  feed.Add(Checkpoint(300));
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(Steps(feed.ReadAfter(position, [] {})), (std::vector<int64_t>{300}));
}

TEST(CheckpointFeedTest, ACheckpointMarkedFinalIsSentAgain) {
  CheckpointFeed feed;
  feed.Add(Checkpoint(100));
  FeedPosition position;
  CheckpointFeed::Advance(position, Checkpoint(100));
  feed.MarkFinal(100);
  CheckpointFeed::Read read = feed.ReadAfter(position, [] {});
  ASSERT_EQ(Steps(read), (std::vector<int64_t>{100}));
  EXPECT_TRUE(read.checkpoints[0].final());
  CheckpointFeed::Advance(position, read.checkpoints[0]);
  EXPECT_TRUE(feed.ReadAfter(position, [] {}).checkpoints.empty());
}

TEST(CheckpointFeedTest, DeletedCheckpointsAreNotSentAndCloseEndsTheWatch) {
  CheckpointFeed feed;
  feed.Add(Checkpoint(100));
  feed.Add(Checkpoint(200, /*final=*/true));
  feed.Remove(100);
  int woken = 0;
  FeedPosition position;
  position.step = 200;
  position.final = true;
  CheckpointFeed::Read read = feed.ReadAfter(position, [&] { ++woken; });
  feed.Close();
  EXPECT_EQ(woken, 1);
  read = feed.ReadAfter(FeedPosition(), [] {});
  EXPECT_EQ(Steps(read), (std::vector<int64_t>{200}));
  EXPECT_FALSE(read.closed);
  read = feed.ReadAfter(position, [] {});
  EXPECT_TRUE(read.closed);
  EXPECT_EQ(read.wait_id, 0u);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
