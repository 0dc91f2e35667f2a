#ifndef PSTRAIN_WORKER_OVERLAPPED_PUSH_H_
#define PSTRAIN_WORKER_OVERLAPPED_PUSH_H_

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/ps_client.h"

namespace pstrain {
namespace worker {

// A push that runs on a thread of its own while the compute thread pulls
// the next batch's parameters (async modes; the pull then misses this
// update, one more step of staleness). One thread serves every push of a
// run, one push at a time, rather than a thread per push.
//
// Start() and Finish() are called by one thread (the compute thread).
class OverlappedPush {
 public:
  // `ps` is borrowed and must outlive this object.
  explicit OverlappedPush(ParameterServerClient& ps);
  // Waits for the push in flight, if any.
  ~OverlappedPush();

  OverlappedPush(const OverlappedPush&) = delete;
  OverlappedPush& operator=(const OverlappedPush&) = delete;

  // Starts pushing `gradients`, which stay borrowed (and unchanged) until
  // Finish() returns. Requires !in_flight().
  void Start(const Gradients& gradients, std::vector<int64_t> base_versions, int64_t examples,
             PushOrigin origin);

  // Whether a push was started and not yet finished.
  bool in_flight() const { return in_flight_; }
  // Where the gradients of the push in flight came from.
  const PushOrigin& origin() const { return origin_; }

  // Waits for the push in flight and returns its outcome. Requires
  // in_flight().
  absl::StatusOr<PushSummary> Finish();

 private:
  struct Request {
    const Gradients* gradients = nullptr;
    std::vector<int64_t> base_versions;
    int64_t examples = 0;
    PushOrigin origin;
  };

  void Serve();

  ParameterServerClient& ps_;
  // The caller's view: whether Finish() is owed, and what was pushed.
  bool in_flight_ = false;
  PushOrigin origin_;

  absl::Mutex mu_;
  std::optional<Request> request_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<PushSummary>> result_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_OVERLAPPED_PUSH_H_
