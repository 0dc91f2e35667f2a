#ifndef PSTRAIN_WORKER_PS_CLIENT_H_
#define PSTRAIN_WORKER_PS_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/model/parameters.h"
#include "common/net/channel_security.h"
#include "common/random/random_source.h"
#include "common/retry/retry.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "worker/internal/narrowed_gradients.h"
#include "worker/shard_slicer.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {
namespace internal {
class IncomingAnswer;
struct OutgoingRequest;
struct PullLane;
class ShardStream;
struct StreamLaneOptions;
class StreamExchange;
}  // namespace internal

struct ParameterServerClientOptions {
  // The job every push and pull names. Required.
  std::string job_id;
  // PushId.worker: the worker's rank in the job, in [0, num_workers) as
  // the shards were told. Default 0.
  int32_t worker = 0;
  // PushId.incarnation: this process's incarnation; non-zero. Required.
  uint64_t incarnation = 0;
  // The run of the job (Assignment.generation) sent with every push and
  // pull, so that shards refuse them once the job has rolled back. 0: not
  // checked.
  uint64_t generation = 0;
  // Until when this worker's membership is sure to hold, asked at each
  // push (PushRequest.valid_until_unix_ms): shards refuse a push that
  // completes later. Empty: pushes carry no deadline.
  std::function<absl::Time()> membership_deadline;
  // The job's update mode: decides which outcomes count as an applied
  // update and what the next pull waits for. Default async.
  UpdateMode update_mode = UPDATE_MODE_ASYNC;
  // Bytes of tensor data per message. Default 1 MiB: gRPC moves 64 KiB to
  // 1 MiB messages fastest, and the shards accept up to 16 MiB.
  int64_t chunk_bytes = 1 << 20;
  // Lanes per shard, each its own connection and long-lived stream. A push
  // or pull of more than parallel_min_bytes for one shard is split over up
  // to this many, as parts of one push or ranges of one read; smaller
  // pushes ride the last lane and pulls the first, so that a push and the
  // next pull overlapped in async mode do not queue behind each other on
  // the shard. Default 2; >= 1. More lanes pay only when one stream's copy,
  // not the network, is the limit.
  int streams_per_shard = 2;
  // Default 4 MiB: below that one stream finishes before a second would
  // have started.
  int64_t parallel_min_bytes = 4 << 20;
  // Open a shared-memory lane beside each stream to a shard on this host
  // and network namespace, so that tensor bytes move through memory
  // instead of messages (parameter_server.proto, OpenLane). A shard
  // elsewhere, with lanes off, or that cannot open one gets every byte in
  // the messages, said once in the log and counted in
  // pstrain_worker_lane_fallbacks_total. Default true.
  bool shared_memory = true;
  // Deadline of one attempt of one call (a pull's wait for a version is
  // added). Default 60 s. An attempt that runs out is retried like an
  // Unavailable one: pushes carry their PushId, so a push that arrived is
  // not applied twice.
  absl::Duration call_timeout = absl::Seconds(60);
  // Retries of Unavailable calls.
  RetryOptions retry;
  // The job's shards have hot-standby replicas (Assignment.replica_epoch >
  // 0): a shard that refuses a call as not its primary (NOT_PRIMARY) or as
  // not holding the job (JOB_ENDED: a primary restarted empty at its
  // address) is failing over, and the call is retried, at the new primary
  // once Redirect names it. Without replicas JOB_ENDED ends the call.
  bool replicated = false;
  // The dtype dense gradients are pushed in (TrainingSpec.wire.gradients):
  // DATA_TYPE_FLOAT32 (default) or DATA_TYPE_BFLOAT16, narrowed with error
  // feedback (internal::NarrowedGradients). Embedding rows stay float32.
  DataType gradient_dtype = DATA_TYPE_FLOAT32;
  // The dtype dense parameters are pulled in over gRPC
  // (TrainingSpec.wire.parameters; PullRequest.dense_dtype): DATA_TYPE_FLOAT32
  // (default) or DATA_TYPE_BFLOAT16.
  DataType parameter_dtype = DATA_TYPE_FLOAT32;
};

// What to read besides every dense variable.
struct PullOptions {
  // Per shard: wait until its version is at least this before reading (a
  // sync round to complete). Empty, or 0 for a shard: read at once.
  std::vector<int64_t> min_versions;
  // Longest wait for min_versions, per attempt. Default 30 s; then the pull
  // fails with DeadlineExceeded naming the shard and the version.
  absl::Duration wait = absl::Seconds(30);
};

// The parameters one step reads: every dense variable whole, the rows of
// each embedding table the batch needs (in the order asked). Reused across
// steps: buffers of an unchanged shape are kept. Thread-compatible.
struct PulledParameters {
  absl::flat_hash_map<std::string, Tensor> dense;
  absl::flat_hash_map<std::string, EmbeddingRows> rows;
  // Per shard: the oldest version any of its values was read at, the base
  // version of gradients computed from them; -1 for shards not involved.
  std::vector<int64_t> versions;
  // Bytes of values read.
  int64_t bytes = 0;

  // A view for Model::Forward and ComputeGradients; valid while *this is
  // not changed.
  ParameterView View() const;
};

// How one shard decided a push.
struct ShardPushOutcome {
  PushOutcome outcome = PUSH_OUTCOME_UNSPECIFIED;
  int64_t version = 0;
};

// How the shards decided one step's push.
struct PushSummary {
  // The push's PushId, less the worker.
  uint64_t incarnation = 0;
  uint64_t sequence = 0;
  // Per shard; UNSPECIFIED for shards not involved.
  std::vector<ShardPushOutcome> shards;
  // Some shard refused the gradients as computed from too old a version
  // (late in sync mode, past the bound in bounded staleness): the batch's
  // records must go back to the coordinator.
  bool stale = false;
  // The push counts as one applied update toward the global step: the
  // first involved shard applied it (sync: this push completed the round
  // there), or a retry found it applied before (async modes).
  bool applied = false;
  // The most updates a shard said it had applied in its answer: the job's
  // global step is at least this (the coordinator's global_step.h).
  int64_t version = 0;
  // Per shard: the version the next pull should wait for (sync mode: the
  // end of the round this push joined); 0 for no wait.
  std::vector<int64_t> next_min_versions;
  int64_t bytes = 0;
};

// A client for every parameter-server shard of one job: pulls dense
// variables and the embedding rows of a batch, pushes gradients split by
// placement, chunked, and in parts over several streams when large, each
// with a PushId (worker, incarnation, sequence) for exactly-once
// application. Each shard is reached over streams_per_shard lanes (one
// connection each), each lane one long-lived PushPull stream that carries
// every call; the calling thread starts a call's exchanges on every shard
// at once and gRPC's callback threads carry them, so no thread is started
// per call. Calls that fail with Unavailable (or run out their attempt's
// deadline) are retried with backoff on a new stream; a retried push keeps
// its PushId. Thread-safe; a push and a pull may run at once (async mode
// overlaps them), but pushes are meant to be issued one at a time.
class ParameterServerClient {
 public:
  // Opens a channel to `address` for stream lane `lane` (0-based).
  using ChannelFactory =
      std::function<std::shared_ptr<grpc::Channel>(const std::string& address, int lane)>;

  // `addresses[i]` is shard i. `clock`, `random` and `metrics` (may be
  // null) are borrowed and must outlive the client. `channels` defaults to
  // insecure channels, one connection per lane.
  // InvalidArgument: no job id, a zero incarnation, chunk_bytes < 4,
  // streams_per_shard < 1, or a number of addresses other than the
  // slicer's shards.
  static absl::StatusOr<std::unique_ptr<ParameterServerClient>> Create(
      std::vector<std::string> addresses, ShardSlicer slicer, ParameterServerClientOptions options,
      Clock& clock, RandomSource& random, WorkerMetrics* metrics,
      ChannelFactory channels = nullptr);

  ParameterServerClient(const ParameterServerClient&) = delete;
  ParameterServerClient& operator=(const ParameterServerClient&) = delete;
  ~ParameterServerClient();

  const ShardSlicer& slicer() const { return slicer_; }

  // Reads every dense variable and, for each table in `rows`, those rows,
  // into *out. Errors, naming the shard:
  //   DeadlineExceeded: a min_version was not reached within the wait, or
  //     a shard stayed unreachable past the retry deadline.
  //   FailedPrecondition / NotFound: the job or a variable is not there
  //     (the job ended or was never set up there).
  //   InvalidArgument: a row id out of the table.
  //   Internal: the answer does not fit what was asked.
  //   Cancelled: Cancel() was called.
  absl::Status Pull(const RowIds& rows, const PullOptions& options, PulledParameters* out);

  // Pushes `gradients` (as Model::ComputeGradients made them), computed
  // from parameters read at `base_versions` (PulledParameters::versions),
  // to every involved shard, in parallel, under the next sequence number.
  // A refused-as-stale push is not an error: see PushSummary::stale.
  // Errors, naming the shard:
  //   Aborted: a shard knows a newer incarnation of this worker.
  //   FailedPrecondition: the job is not running there.
  //   InvalidArgument: gradients the shard refuses (a bug), or a gradient
  //     for a variable the job does not have.
  //   DeadlineExceeded: a shard stayed unreachable past the retry deadline;
  //     whether it applied the push is unknown.
  //   Cancelled: Cancel() was called.
  //
  // `origin` names the records the gradients came from (lease, epoch and
  // range); the shards book it so that a lost worker's lease is handed
  // back without what it trained. Default: none.
  absl::StatusOr<PushSummary> Push(const Gradients& gradients,
                                   absl::Span<const int64_t> base_versions, int64_t examples,
                                   const PushOrigin& origin = PushOrigin());

  // Push in two halves, so that one thread can push and go on (async
  // training pulls the next batch's parameters meanwhile) without a thread
  // of its own to wake: StartPush sends the push's first attempt to every
  // involved shard and returns at once; FinishPush waits for the outcome,
  // retries what failed as Push does, and returns what Push would have.
  // `gradients` stay borrowed, and unchanged, until FinishPush returns.
  // One push at a time: StartPush requires !push_in_flight(), FinishPush
  // requires it. A push started and never finished is waited for by the
  // destructor. pstrain_worker_push_latency_seconds counts from start to
  // finish.
  void StartPush(const Gradients& gradients, absl::Span<const int64_t> base_versions,
                 int64_t examples, const PushOrigin& origin = PushOrigin());
  absl::StatusOr<PushSummary> FinishPush();
  bool push_in_flight() const { return push_ != nullptr; }

  // Sync mode, a push in flight: per shard, the version that ends the
  // round the push joins there (its base version + 1), 0 for shards it
  // does not involve; what PushSummary::next_min_versions will hold unless
  // the push is refused. A pull may wait for these before FinishPush: a
  // push refused as stale joined no round, but its shard is past that
  // version already. All 0 when the push could not be started. Requires
  // push_in_flight().
  std::vector<int64_t> RoundEndsOfPushInFlight() const;

  // Ends retry pauses and calls in flight with Cancelled, now and for
  // every later call. Thread-safe.
  void Cancel();

  // Shard `shard` is served at `address` from now on: its primary failed
  // over to its backup (docs/design/replicas.md). Calls in flight to it
  // fail as Unavailable and are retried there, pushes with their push ids,
  // so that a push the old primary acknowledged is answered DUPLICATE and
  // one it did not is applied once. Thread-safe.
  void Redirect(int shard, const std::string& address);

  // The sequence number the next push will carry.
  uint64_t next_sequence() const { return next_sequence_.load(); }

  // The streams, over every shard, whose shared-memory lane is open. A
  // stream opens its lane beside it at its first use, without holding that
  // call up, so calls made before the lane is open keep their bytes in the
  // messages. 0 with shared_memory off or no shard offering lanes.
  int open_lanes() const;

 private:
  // One call to one shard: one or more exchanges (a pull lane's request, a
  // push's parts) started at once, exchange i on lane (first_lane + i),
  // and retried together when `read` says Unavailable.
  struct ShardCall {
    int shard = 0;
    int first_lane = 0;
    std::vector<std::vector<internal::OutgoingRequest>>* exchanges = nullptr;
    // Added to call_timeout for each attempt (a pull's wait for a version).
    absl::Duration extra;
    // For retry logs ("ps/1 (...) (pull)") and metrics ("pull_unavailable").
    std::string what;
    const char* retry_reason = "";
    // Reads one attempt's answers, one entry per exchange; Unavailable to
    // retry the call.
    std::function<absl::Status(std::vector<absl::StatusOr<std::vector<internal::IncomingAnswer>>>&)>
        read;
  };

  ParameterServerClient(std::vector<std::string> addresses, ShardSlicer slicer,
                        ParameterServerClientOptions options, Clock& clock, RandomSource& random,
                        WorkerMetrics* metrics, ChannelFactory channels);

  // One attempt of a ShardCall in flight.
  struct CallAttempt {
    absl::Time deadline;
    // Per exchange: the stream it rides and the exchange; empty when the
    // client was cancelled.
    std::vector<std::pair<std::shared_ptr<internal::ShardStream>,
                          std::shared_ptr<internal::StreamExchange>>>
        exchanges;
  };
  // Starts one attempt of every call at once: call c's is the c-th.
  std::deque<CallAttempt> StartCalls(const std::vector<ShardCall>& calls);
  // Waits for the attempts StartCalls made, then retries, one call at a
  // time with backoff, those that failed with Unavailable, adding their
  // attempts to `attempts`. Returns each call's final status, in order.
  std::vector<absl::Status> FinishCalls(std::vector<ShardCall>& calls,
                                        std::deque<CallAttempt>& attempts);
  // Starts one attempt of `call`'s exchanges.
  CallAttempt StartAttempt(const ShardCall& call);
  // Waits for an attempt's exchanges and reads them.
  absl::Status FinishAttempt(const ShardCall& call, CallAttempt& attempt);
  // The open stream of (shard, lane), opening a new one in place of a
  // broken one; null once cancelled.
  std::shared_ptr<internal::ShardStream> Stream(int shard, int lane);

  // Pull: makes every tensor a pull fills, keeping buffers of an
  // unchanged shape.
  absl::Status PrepareBuffers(const RowIds& rows, PulledParameters* out) const;
  // The call reading pull lane `lane` (`plan`) of `shard`, its request put
  // in `exchange`, which must outlive it; `read` is the caller's to set.
  ShardCall PullCall(int shard, int lane, const internal::PullLane& plan,
                     const PullOptions& options,
                     std::vector<std::vector<internal::OutgoingRequest>>& exchange) const;
  // The error a pull returns when its call to `shard` failed with `failure`.
  absl::Status PullFailure(int shard, const PullOptions& options,
                           const absl::Status& failure) const;
  absl::Status ReadLaneAnswer(int shard, const internal::PullLane& lane,
                              const std::vector<internal::IncomingAnswer>& responses,
                              PulledParameters* out, int64_t* version, int64_t* bytes) const;
  // Push: a push started and not yet finished (StartPush).
  struct PushInFlight;
  // Builds `push`'s messages and calls: what StartPush starts.
  absl::Status PreparePush(const Gradients& gradients, absl::Span<const int64_t> base_versions,
                           int64_t examples, const PushOrigin& origin, PushInFlight& push);
  // Push: every field its messages share but the base version.
  PushRequest PushHeader(uint64_t sequence, int64_t examples, const PushOrigin& origin) const;
  // Fills what the shards' outcomes mean for the step (stale, applied, the
  // versions the next pull waits for) into *summary; `messages[s]` is
  // empty for shards the push did not involve.
  void Conclude(const std::vector<std::vector<std::vector<internal::OutgoingRequest>>>& messages,
                absl::Span<const int64_t> base_versions, PushSummary* summary) const;
  // Whether a push refused MEMBERSHIP_LAPSED is tried again: the refused
  // attempt outlived its deadline while this worker's membership holds.
  bool AttemptOutlived(const absl::Status& refused) const;
  absl::StatusOr<ShardPushOutcome> ReadPushAnswers(
      std::vector<absl::StatusOr<std::vector<internal::IncomingAnswer>>>& answers) const;
  std::string ShardName(int shard) const;
  std::string ShardNameLocked(int shard) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a stream to `shard` opens its lane with.
  internal::StreamLaneOptions LaneOptions(int shard) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Logs the first lane opened and the first fallback, and counts every
  // fallback.
  void ReportLane(const std::string& shard_name, const absl::Status& status);

  // Constant after construction.
  const ChannelFactory channel_factory_;
  const ShardSlicer slicer_;
  const ParameterServerClientOptions options_;
  Clock& clock_;
  RandomSource& random_;
  WorkerMetrics* const metrics_;
  // Per shard: bytes of a lane's segment (0: no lanes); room for a pull
  // and a push of its dense variables at once, and rows besides.
  std::vector<int64_t> segment_bytes_;
  std::atomic<bool> lane_reported_{false};
  std::atomic<bool> fallback_reported_{false};

  std::atomic<uint64_t> next_sequence_{1};
  // Pushes run one at a time (the class comment): only StartPush and
  // FinishPush touch these.
  internal::NarrowedGradients narrowed_;
  std::unique_ptr<PushInFlight> push_;
  StopSignal cancelled_;
  mutable absl::Mutex mu_;
  // Where each shard is served: its primary's, with replicas (Redirect).
  std::vector<std::string> addresses_ ABSL_GUARDED_BY(mu_);
  // channels_[shard][lane]: each lane its own connection.
  std::vector<std::vector<std::shared_ptr<grpc::Channel>>> channels_ ABSL_GUARDED_BY(mu_);
  // streams_[shard][lane]: one long-lived PushPull stream per lane, opened
  // at first use and again after it breaks.
  std::vector<std::vector<std::shared_ptr<internal::ShardStream>>> streams_ ABSL_GUARDED_BY(mu_);
  // Broken streams replaced before gRPC was done with them: the destructor
  // waits for them too, so that no callback outlives the client.
  std::vector<std::shared_ptr<internal::ShardStream>> retired_ ABSL_GUARDED_BY(mu_);
};

// Channels with `security`, one connection per lane: what Create uses
// (with plaintext) when given no factory.
ParameterServerClient::ChannelFactory LaneChannels(ChannelSecurity security);

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_PS_CLIENT_H_
