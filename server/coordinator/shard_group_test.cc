#include "server/coordinator/shard_group.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/checkpoint/posix_env.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {
namespace {

// Two shards with a backup each: ps/0 and ps/1 primaries, ps/2 and ps/3
// their backups.
class ReplicatedShardGroupTest : public ::testing::Test {
 protected:
  ReplicatedShardGroupTest() {
    std::vector<ShardGroup::Shard> primaries, backups;
    for (int i = 0; i < 4; ++i) {
      ShardGroup::Shard shard;
      shard.task.set_type(TASK_TYPE_PS);
      shard.task.set_index(i);
      shard.address = processes_[i]->address();
      shard.client = processes_[i]->NewClient();
      (i < 2 ? primaries : backups).push_back(std::move(shard));
    }
    group_ = std::make_unique<ShardGroup>(std::move(primaries), std::move(backups));
  }

  // The order in which ForEachProcess starts and ends its calls, as
  // "start ps/N" and "end ps/N"; each call lasts a little, so that calls
  // made at once would overlap. ps/3's call fails.
  std::vector<std::string> CallOrder(absl::Status* status) {
    std::vector<std::string> order;
    absl::Mutex mu;
    auto note = [&](const std::string& what) {
      absl::MutexLock lock(&mu);
      order.push_back(what);
    };
    *status = group_->ForEachProcess([&](const ShardGroup::Shard& process) {
      const std::string name = "ps/" + std::to_string(process.task.index());
      note("start " + name);
      absl::SleepFor(absl::Milliseconds(20));
      note("end " + name);
      return process.task.index() == 3 ? absl::UnavailableError("ps/3 is gone") : absl::OkStatus();
    });
    return order;
  }

  // Whether every call to `first` ended before any call to `then` started.
  static bool Before(const std::vector<std::string>& order, const std::vector<std::string>& first,
                     const std::vector<std::string>& then) {
    size_t last_end = 0, first_start = order.size();
    for (size_t i = 0; i < order.size(); ++i) {
      for (const std::string& name : first) {
        if (order[i] == "end " + name) last_end = std::max(last_end, i);
      }
      for (const std::string& name : then) {
        if (order[i] == "start " + name) first_start = std::min(first_start, i);
      }
    }
    return last_end < first_start;
  }

  PosixEnv env_;
  FakeShard ps0_{env_, "localhost:1"}, ps1_{env_, "localhost:2"}, ps2_{env_, "localhost:3"},
      ps3_{env_, "localhost:4"};
  FakeShard* processes_[4] = {&ps0_, &ps1_, &ps2_, &ps3_};
  std::unique_ptr<ShardGroup> group_;
};

TEST_F(ReplicatedShardGroupTest, EveryProcessIsCalledThePrimariesFirst) {
  absl::Status status;
  const std::vector<std::string> order = CallOrder(&status);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_TRUE(Before(order, {"ps/0", "ps/1"}, {"ps/2", "ps/3"}));
  // A backup's error is returned when every primary's call succeeded.
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_NE(status.message().find("ps/3"), std::string::npos) << status;
}

TEST_F(ReplicatedShardGroupTest, AfterAFailoverThePromotedBackupIsCalledFirst) {
  ASSERT_TRUE(group_->Promote(0).ok());
  absl::Status status;
  const std::vector<std::string> order = CallOrder(&status);
  // ps/2 now serves shard 0 alone; ps/0, out of the chain, may still hold
  // the job and is called with the other processes.
  ASSERT_EQ(order.size(), 8u);
  EXPECT_TRUE(Before(order, {"ps/2", "ps/1"}, {"ps/0", "ps/3"}));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
