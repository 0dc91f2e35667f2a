#include "server/coordinator/shard_group.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {

std::vector<std::string> ShardGroup::addresses() const {
  std::vector<std::string> addresses;
  for (const Shard& shard : shards_) addresses.push_back(shard.address);
  return addresses;
}

absl::Status ShardGroup::ForEach(
    const std::function<absl::Status(int index, ShardClient& client)>& fn) const {
  std::vector<absl::Status> results(shards_.size());
  std::vector<std::thread> threads;
  threads.reserve(shards_.size());
  for (size_t i = 0; i < shards_.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = fn(static_cast<int>(i), *shards_[i].client); });
  }
  for (std::thread& thread : threads) thread.join();
  int failed = 0;
  int first = -1;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) continue;
    if (first < 0) first = static_cast<int>(i);
    ++failed;
  }
  if (first < 0) return absl::OkStatus();
  const Shard& shard = shards_[first];
  return absl::Status(
      results[first].code(),
      absl::StrCat(TaskName(shard.task), " at ", shard.address, ": ", results[first].message(),
                   failed > 1 ? absl::StrCat(" (and ", failed - 1, " other shards failed)") : ""));
}

void ShardGroup::CancelAll() const {
  for (const Shard& shard : shards_) shard.client->Cancel();
}

}  // namespace coordinator
}  // namespace pstrain
