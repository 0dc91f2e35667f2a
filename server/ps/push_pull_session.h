#ifndef PSTRAIN_SERVER_PS_PUSH_PULL_SESSION_H_
#define PSTRAIN_SERVER_PS_PUSH_PULL_SESSION_H_

// One PushPull conversation with a worker (parameter_server.proto), apart
// from what carries it: a gRPC stream, or a shared-memory lane's socket
// (server/ps/lane_session.h). Push parts, pulls that wait for a version,
// answers read chunk by chunk, lane regions and flow control are handled
// here once; a SessionWire only moves messages.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/shared_segment.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/lane_registry.h"
#include "server/ps/pull_answer_wire.h"
#include "server/ps/pull_reader.h"
#include "server/ps/push_assembler.h"
#include "server/ps/shard_store.h"

namespace pstrain {

struct PushPullSessionOptions {
  // Bytes of values per answer message of a pull (the whole pull, when
  // its values lie in a lane region).
  int64_t chunk_bytes = 1 << 20;
  // Answers queued for sending past which the session reads no further
  // requests until half of them have gone.
  int64_t max_queued_bytes = 32 << 20;
  // Longest wait a pull may ask for with wait_ms.
  absl::Duration max_wait = absl::Minutes(10);
};

// What carries a session's messages. Each method is called by the session
// only as described; the wire reports back through the session's On*
// methods.
class SessionWire {
 public:
  enum class Written { kPending, kDone, kFailed };

  virtual ~SessionWire() = default;

  // Reads the next request when there is one: the wire then calls
  // OnRequest, or OnReadsDone once the worker sends no more. Called once
  // per request, never again before that request was handed over.
  virtual void ReadNext() = 0;
  // Sends `answer` (with `slices`, the values of some of its pull's dense
  // pieces, when TakesSlices). kPending: the wire calls OnWriteDone once
  // it is sent; kDone / kFailed: sent or not, there and then. One write at
  // a time.
  virtual Written Write(const PushPullResponse& answer, PulledSlices slices) = 0;
  // Whether answers may carry values in slices of their own.
  virtual bool TakesSlices() const = 0;
  // The session is over: every request answered, nothing more to send or
  // read. Called once; the session may be destroyed from here on.
  virtual void End() = 0;
};

// Thread-safe as the wire uses it: OnRequest and OnReadsDone from one
// thread at a time, the rest from any thread.
class PushPullSession {
 public:
  // `store`, `lanes` (null: no lanes) and `wire` are borrowed and must
  // outlive the session.
  PushPullSession(ShardStore& store, LaneRegistry* lanes, PushPullSessionOptions options,
                  SessionWire& wire);
  ~PushPullSession();

  // Asks the wire for the first request.
  void Start();

  PushPullSession(const PushPullSession&) = delete;
  PushPullSession& operator=(const PushPullSession&) = delete;

  // Handles one request; `parsed` says whether its bytes parsed (if not,
  // `request` holds nothing of use and an error answers it). May change
  // `request`.
  void OnRequest(PushPullRequest& request, const absl::Status& parsed);
  // The worker sends no more: push parts left unfinished fail.
  void OnReadsDone();
  // A write started with kPending is over.
  void OnWriteDone(bool ok);
  // The worker is gone: pulls waiting for a version stop waiting.
  void Cancel();

 private:
  // An answer waiting to be written: a message, or a pull read chunk by
  // chunk into `message`.
  struct Outgoing;
  // A request's region of a lane's segment: where a push's gradients lie,
  // where a pull's dense values go.
  struct LaneTarget {
    std::shared_ptr<const SharedSegment> segment;
    LaneRegion region;
  };

  absl::StatusOr<LaneTarget> FindLane(const PushPullRequest& request);
  void HandlePush(uint64_t tag, PushRequest& push, const absl::StatusOr<LaneTarget>& lane);
  void HandlePull(uint64_t tag, const PullRequest& pull, LaneTarget lane);
  void QueuePull(uint64_t tag, std::shared_ptr<ParameterShard> shard, const PullRequest& pull,
                 LaneTarget lane, absl::Time start);
  void SendError(uint64_t tag, const absl::Status& status);
  // Queues an answer and starts writing if no write is in flight.
  void Enqueue(Outgoing out);
  // Called by whoever owns the writing side: writes queued answers until
  // one is pending or none is left.
  void WriteNext();
  // Reads the next chunk of `front`'s pull into its message.
  PulledSlices ReadChunk(Outgoing& front);
  bool ShouldFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ShardStore& store_;
  LaneRegistry* const lanes_;
  const PushPullSessionOptions options_;
  SessionWire& wire_;

  // Used by the reading side only (one OnRequest at a time).
  std::map<uint64_t, std::unique_ptr<PushPart>> parts_;

  absl::Mutex mu_;
  // The front entry belongs to the writing side while writing_ is set.
  std::deque<Outgoing> queue_ ABSL_GUARDED_BY(mu_);
  int64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Pulls waiting for a version: token -> (shard, gate waiter id; 0 until
  // known).
  std::map<uint64_t, std::pair<std::shared_ptr<ParameterShard>, uint64_t>> waits_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PUSH_PULL_SESSION_H_
