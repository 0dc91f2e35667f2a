#ifndef PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_
#define PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "protos/cluster.pb.h"
#include "server/coordinator/shard_client.h"

namespace pstrain {
namespace coordinator {

// The parameter-server shards of the running job, shard i being task ps/i,
// with a client of each. Thread-safe.
class ShardGroup {
 public:
  struct Shard {
    TaskId task;
    std::string address;
    std::unique_ptr<ShardClient> client;
  };

  explicit ShardGroup(std::vector<Shard> shards) : shards_(std::move(shards)) {}

  ShardGroup(const ShardGroup&) = delete;
  ShardGroup& operator=(const ShardGroup&) = delete;

  int size() const { return static_cast<int>(shards_.size()); }
  const Shard& shard(int index) const { return shards_[index]; }
  std::vector<std::string> addresses() const;

  // Calls fn(index, client) for every shard at once, each on its own
  // thread, and waits for all of them. Returns OK, or the error of the
  // lowest failing shard with the shard named ("ps/1 at host:port: ...")
  // and how many others failed.
  absl::Status ForEach(const std::function<absl::Status(int index, ShardClient& client)>& fn) const;

  // Cancels every call in progress and to come (shutdown).
  void CancelAll() const;

 private:
  const std::vector<Shard> shards_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_
