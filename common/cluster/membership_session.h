#ifndef PSTRAIN_COMMON_CLUSTER_MEMBERSHIP_SESSION_H_
#define PSTRAIN_COMMON_CLUSTER_MEMBERSHIP_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protos/cluster.pb.h"
#include "common/net/channel_security.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {

struct MembershipSessionOptions {
  // host:port of the coordinator. Required.
  std::string coordinator_address;
  // TLS and the cluster token of the coordinator channel. Default:
  // plaintext, no token.
  ChannelSecurity security;
  // Who this process is, and where peers and Prometheus reach it.
  TaskId task;
  std::string address;
  std::string metrics_address;
  // Deadline of each Register or Heartbeat call.
  absl::Duration call_timeout = absl::Seconds(5);
  // Backoff between attempts while the coordinator cannot be reached:
  // doubles from `retry_initial` up to `retry_max`, with jitter.
  absl::Duration retry_initial = absl::Milliseconds(100);
  absl::Duration retry_max = absl::Seconds(3);
  // Fills what the process says of itself into each heartbeat (job_id,
  // step, health, queue_depth); called on the session's thread. May be
  // empty.
  std::function<void(HeartbeatRequest*)> describe_self;
};

// Keeps a server process (a parameter-server shard) a member of the cluster:
// registers with a random incarnation — retrying while the coordinator is
// unreachable and logging what it waits for and since when — then sends
// heartbeats at the interval the coordinator asks for, and registers again
// with the same incarnation when the coordinator has forgotten it (it
// restarted). Thread-safe.
class MembershipSession {
 public:
  // `on_shutdown` runs (on the session's thread) when a heartbeat answer
  // says the cluster is shutting down.
  MembershipSession(MembershipSessionOptions options, std::function<void()> on_shutdown);
  ~MembershipSession();

  MembershipSession(const MembershipSession&) = delete;
  MembershipSession& operator=(const MembershipSession&) = delete;

  // Starts the session's thread. Call once.
  void Start();

  // Ends the session: no more heartbeats, the thread joined. Idempotent.
  void Stop();

  uint64_t incarnation() const { return incarnation_; }

  // OK once registered; DeadlineExceeded naming the coordinator and what
  // the last attempt said otherwise.
  absl::Status WaitUntilRegistered(absl::Duration timeout);

 private:
  void Run();
  absl::Status RegisterOnce();
  absl::Status HeartbeatOnce(bool* shutdown);
  // Waits `duration` or until Stop(); returns false when stopping.
  bool Pause(absl::Duration duration);

  // Constant after construction.
  const MembershipSessionOptions options_;
  const std::function<void()> on_shutdown_;
  const uint64_t incarnation_;
  const std::unique_ptr<ClusterService::Stub> stub_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(2);

  std::thread thread_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLUSTER_MEMBERSHIP_SESSION_H_
