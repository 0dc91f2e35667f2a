#ifndef PSTRAIN_COMMON_NET_CALL_REGISTRY_H_
#define PSTRAIN_COMMON_NET_CALL_REGISTRY_H_

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"

namespace pstrain {

// The gRPC calls a client has in flight, so that shutting it down cancels
// them (a long poll or a stream would otherwise hold a stopping process
// until its deadline). Thread-safe.
class CallRegistry {
 public:
  CallRegistry() = default;
  CallRegistry(const CallRegistry&) = delete;
  CallRegistry& operator=(const CallRegistry&) = delete;

  // Records a call about to start; false (and nothing recorded) once shut
  // down: the call must not start.
  bool Add(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return false;
    contexts_.insert(context);
    return true;
  }

  // After the call ended, before `context` is destroyed.
  void Remove(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    contexts_.erase(context);
  }

  // Cancels the calls in flight; later Add()s fail. Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (grpc::ClientContext* context : contexts_) context->TryCancel();
  }

 private:
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<grpc::ClientContext*> contexts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_CALL_REGISTRY_H_
