#ifndef PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_
#define PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_

// Fakes for testing the coordinator without parameter servers: an in-memory
// shard that writes and checks snapshot files the way a shard does, reached
// through the ShardClient interface; a JobPlanner with a fixed plan; and a
// reader of the coordinator's stream sources.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/shard_client.h"
#include "server/coordinator/stream_source.h"

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

 private:
  class Client;

  // The ParameterServer calls, as the shard's service answers them.
  absl::StatusOr<CreateVariablesResponse> CreateVariables(const CreateVariablesRequest& request);
  absl::Status DropJob(const DropJobRequest& request);
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request);
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request);
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& request);

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
};

// The ShardClientFactory of a coordinator whose parameter servers are
// `shards`, each found by its address. A client of an address that no shard
// has fails every call with Unavailable, as one of a shard that cannot be
// reached does. The shards are borrowed and must outlive the clients.
ShardClientFactory FakeShardClients(std::vector<FakeShard*> shards);

// Plans every job as two dense variables and one embedding table over
// `num_records` records, without reading data or building a model.
class FakePlanner final : public JobPlanner {
 public:
  explicit FakePlanner(int64_t num_records = 10000) : num_records_(num_records) {}
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override;

 private:
  const int64_t num_records_;
};

// Reads a stream source the way a reactor does, waiting (in real time, up to
// `timeout` for each message) for its wake when nothing is ready. For one
// thread.
template <typename Message>
class SourceReader {
 public:
  explicit SourceReader(std::shared_ptr<StreamSource<Message>> source,
                        absl::Duration timeout = absl::Seconds(30))
      : source_(std::move(source)), timeout_(timeout) {}
  ~SourceReader() {
    if (wait_id_ != 0) source_->CancelWait(wait_id_);
    source_->Close();
  }

  SourceReader(const SourceReader&) = delete;
  SourceReader& operator=(const SourceReader&) = delete;

  // The next message, or nothing once the stream ended or time ran out.
  std::optional<Message> Next() {
    const absl::Time give_up = absl::Now() + timeout_;
    while (ready_.empty() && !ended_) {
      if (wait_id_ != 0) {
        if (!woken_->WaitForNotificationWithTimeout(give_up - absl::Now())) return std::nullopt;
        wait_id_ = 0;
      }
      auto woken = std::make_shared<absl::Notification>();
      typename StreamSource<Message>::Next next = source_->Poll([woken] { woken->Notify(); });
      for (Message& m : next.messages) ready_.push_back(std::move(m));
      if (next.end.has_value()) ended_ = true;
      wait_id_ = next.wait_id;
      woken_ = woken;
    }
    if (ready_.empty()) return std::nullopt;
    Message m = std::move(ready_.front());
    ready_.erase(ready_.begin());
    return m;
  }

 private:
  const std::shared_ptr<StreamSource<Message>> source_;
  const absl::Duration timeout_;
  std::vector<Message> ready_;
  bool ended_ = false;
  uint64_t wait_id_ = 0;
  std::shared_ptr<absl::Notification> woken_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_
