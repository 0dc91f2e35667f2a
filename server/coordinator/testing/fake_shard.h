#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_SHARD_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_SHARD_H_

// A parameter-server shard in memory for testing the coordinator without
// parameter servers: it writes and checks snapshot files the way a shard
// does, reached through the ShardClient interface.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/shard_client.h"
#include "server/coordinator/shard_group.h"

namespace pstrain {
namespace coordinator {

// A parameter-server shard in memory that keeps no variables: it records
// the calls it gets, writes a small file through `env` for each Snapshot
// (and reports its size and CRC32C as a shard does), and checks the file of
// each Restore against the expected size and CRC32C. The coordinator calls
// it through NewClient() or FakeShardClients, without gRPC. Thread-safe.
class FakeShard {
 public:
  // The bytes a Snapshot writes to request.path.
  using SnapshotContents =
      std::function<absl::StatusOr<std::string>(const SnapshotRequest& request)>;

  // `env` is borrowed and must outlive the shard. `address` (host:port) is
  // what its parameter server registers with; nothing listens there.
  FakeShard(Env& env, std::string address);

  FakeShard(const FakeShard&) = delete;
  FakeShard& operator=(const FakeShard&) = delete;

  const std::string& address() const { return address_; }

  // A client of this shard, answering as GrpcShardClient does: an error
  // names the method, and after Cancel() every call returns Cancelled. It
  // must not outlive the shard.
  std::unique_ptr<ShardClient> NewClient();

  std::vector<CreateVariablesRequest> created() const;
  std::vector<std::string> dropped() const;
  std::vector<RestoreRequest> restored() const;
  int snapshots() const;
  // The push ledger ReadPushLedger and Snapshot answer with (default:
  // empty), and the ReadPushLedger requests received.
  void SetLedger(PushLedger ledger);
  std::vector<ReadPushLedgerRequest> ledger_reads() const;
  // Blocks until `count` ReadPushLedger requests arrived or `timeout` (real
  // time) passed; whether they did.
  bool WaitForLedgerReads(size_t count, absl::Duration timeout) const;
  // What each later Snapshot writes. Default: a line naming the job and the
  // step. An error fails the Snapshot with it.
  void SetSnapshotContents(SnapshotContents contents);
  // The CommitRound requests received, and what each later one answers: OK
  // (default) or `failure`, the first `times` of them (-1: every one).
  std::vector<CommitRoundRequest> commits() const;
  void FailCommits(absl::Status failure, int times = -1);
  // Blocks until `count` CommitRound requests arrived or `timeout` (real
  // time) passed; whether they did.
  bool WaitForCommits(size_t count, absl::Duration timeout) const;
  // Called with each CommitRound request as it arrives, before it is
  // answered (a test may block it there). Default: none.
  void OnCommit(std::function<void(const CommitRoundRequest& request)> hook);
  // The updates each later Snapshot says it holds, beyond the global step
  // it was asked at (workers that trained on since they reported).
  // Default 0.
  void SetUpdatesSinceReported(int64_t updates);

 private:
  class Client;

  // The ParameterServer calls, as the shard's service answers them.
  absl::StatusOr<CreateVariablesResponse> CreateVariables(const CreateVariablesRequest& request);
  absl::Status DropJob(const DropJobRequest& request);
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request);
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request);
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& request);
  absl::StatusOr<CommitRoundResponse> CommitRound(const CommitRoundRequest& request);

  // Constant after construction.
  Env& env_;
  const std::string address_;

  mutable absl::Mutex mu_;
  std::vector<CreateVariablesRequest> created_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> dropped_ ABSL_GUARDED_BY(mu_);
  std::vector<RestoreRequest> restored_ ABSL_GUARDED_BY(mu_);
  int snapshots_ ABSL_GUARDED_BY(mu_) = 0;
  PushLedger ledger_ ABSL_GUARDED_BY(mu_);
  std::vector<ReadPushLedgerRequest> ledger_reads_ ABSL_GUARDED_BY(mu_);
  SnapshotContents snapshot_contents_ ABSL_GUARDED_BY(mu_);
  int64_t updates_since_reported_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<CommitRoundRequest> commits_ ABSL_GUARDED_BY(mu_);
  absl::Status commit_failure_ ABSL_GUARDED_BY(mu_);
  int commit_failures_left_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void(const CommitRoundRequest& request)> commit_hook_ ABSL_GUARDED_BY(mu_);
};

// The ShardClientFactory of a coordinator whose parameter servers are
// `shards`, each found by its address. A client of an address that no shard
// has fails every call with Unavailable, as one of a shard that cannot be
// reached does. The shards are borrowed and must outlive the clients.
ShardClientFactory FakeShardClients(std::vector<FakeShard*> shards);

// A job's shard group of `shards`, shard i being ps/i with a client of
// shards[i]. The shards are borrowed and must outlive the group.
std::shared_ptr<ShardGroup> FakeShardGroup(std::vector<FakeShard*> shards);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_SHARD_H_
