#ifndef PSTRAIN_SERVER_PS_REPLICA_FORWARDER_H_
#define PSTRAIN_SERVER_PS_REPLICA_FORWARDER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/ps/shard_metrics.h"
#include "server/ps/update_log.h"

namespace pstrain {

struct ReplicaForwarderOptions {
  // Stamped on every ReplicateRequest.
  std::string job_id;
  uint64_t generation = 0;
  uint64_t epoch = 0;
  // The backup's host:port.
  std::string backup_address;
  // How the backup is dialled; its message limit is raised to hold a whole
  // push. Default: plaintext.
  ChannelSecurity security;
  // Waits before dialling again after a broken stream, doubling from min
  // to max. Defaults 20 ms .. 2 s.
  absl::Duration min_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Seconds(2);
  // Bytes of entries one ReplicateRequest carries (a larger entry goes
  // alone), and of a piece of a rebuilt backup's state. Default 4 MiB.
  int64_t max_request_bytes = 4 << 20;
  // A backup being rebuilt (docs/design/replicas.md): the state given to
  // SendState goes first, and until the backup has caught up the primary
  // acknowledges without waiting for it. It joins once it holds the state
  // and is at most `join_backlog` entries behind: from then on entries wait
  // for it, and it has joined (joined()) once it holds every entry decided
  // before. Default false: the backup starts from the primary's state.
  bool rebuilds_backup = false;
  int64_t join_backlog = 64;
};

// A primary's UpdateLog: queues its decisions and writes them, in order,
// on one Replicate stream to its backup from its own thread, releasing the
// waiters of each entry the backup says it applied. A broken stream is
// dialled again with backoff and every entry not yet acknowledged is sent
// again (the backup skips those it applied). REPLICA_FENCED from the
// backup (it was promoted) fails every waiter and every later entry with
// FailedPrecondition NOT_PRIMARY. Any other refusal (a backup restarted
// empty at its address, which does not hold the job) is dialled again like
// a broken stream: waiters wait until the backup answers or the
// coordinator, which finds it lost, says GoOnAlone. Thread-safe.
class ReplicaForwarder : public UpdateLog {
 public:
  ReplicaForwarder(ReplicaForwarderOptions options, ShardMetrics& metrics);
  // Stop(JOB_ENDED) if not stopped, then joins the sender.
  ~ReplicaForwarder() override;

  ReplicaForwarder(const ReplicaForwarder&) = delete;
  ReplicaForwarder& operator=(const ReplicaForwarder&) = delete;

  uint64_t Append(ReplicaEntry entry) override;
  absl::Status AwaitReplicated(uint64_t ticket) override;

  // The backup is gone and the primary goes on alone (ChangeReplica
  // without a backup): every waiter and every later entry completes at
  // once with OK. Nothing more is sent.
  void GoOnAlone();
  // Every waiter and later entry fails with `status`; nothing more is
  // sent. The first of Stop, GoOnAlone and a refusal wins.
  void Stop(absl::Status status);

  // The state a rebuilt backup starts from (CutShardState): sent before
  // the first entry, whole again on every stream until the backup says it
  // holds it. Once, with rebuilds_backup.
  void SendState(std::string bytes, uint32_t crc32c);
  // Whether the backup holds everything acknowledged so far, and nothing
  // is acknowledged before it has it: always, unless rebuilds_backup and
  // the backup has not caught up yet.
  bool joined() const;

  // OK, or why this primary acknowledges nothing more.
  absl::Status failure() const;
  // The highest sequence the backup said it applied.
  uint64_t applied_through() const;

  // Cancels the current stream, as a broken connection would.
  void BreakStreamForTesting();

 private:
  using Stream = grpc::ClientReaderWriter<ReplicateRequest, ReplicateResponse>;

  void Run();
  // One stream, from dialling to its end: false when the forwarder is done.
  // Sets *heard when the backup answered on it.
  bool Serve(bool* heard);
  void ReadAnswers(Stream& stream) ABSL_LOCKS_EXCLUDED(mu_);
  // The next entries to send after `sent`, within max_request_bytes; empty
  // when the forwarder is done or the stream ended.
  std::deque<std::shared_ptr<const ReplicaEntry>> NextBatch(uint64_t sent) ABSL_LOCKS_EXCLUDED(mu_);
  bool DoneLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return alone_ || !failure_.ok(); }
  // Whether the acknowledgement of `ticket` waits for the backup: not
  // before a rebuilt backup joined, nor for an entry decided before.
  bool WaitsForBackupLocked(uint64_t ticket) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return joining_ && ticket > join_through_;
  }
  // A rebuilt backup's state, when it must go first on a new stream (null
  // otherwise); waits until SendState gave it.
  std::shared_ptr<const std::string> StateToSend() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes the state in pieces; false when the stream broke.
  bool WriteState(Stream& stream, const std::string& state);
  // After an answer: a rebuilt backup that caught up starts to join.
  void MaybeJoinLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const ReplicaForwarderOptions options_;
  ShardMetrics& metrics_;
  std::unique_ptr<ParameterServer::Stub> stub_;

  mutable absl::Mutex mu_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t applied_through_ ABSL_GUARDED_BY(mu_) = 0;
  // Entries not yet acknowledged, sequences applied_through_ + 1, ...
  std::deque<std::shared_ptr<const ReplicaEntry>> unacknowledged_ ABSL_GUARDED_BY(mu_);
  bool alone_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // The current stream's context (null between streams) and whether that
  // stream ended.
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stream_ended_ ABSL_GUARDED_BY(mu_) = false;
  // A rebuilt backup: its state (until it holds it), whether it does, and
  // whether acknowledgements wait for it, of entries after join_through_.
  std::shared_ptr<const std::string> state_ ABSL_GUARDED_BY(mu_);
  uint32_t state_crc32c_ ABSL_GUARDED_BY(mu_) = 0;
  bool state_held_ ABSL_GUARDED_BY(mu_);
  bool joining_ ABSL_GUARDED_BY(mu_);
  uint64_t join_through_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread sender_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_REPLICA_FORWARDER_H_
