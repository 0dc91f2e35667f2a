#ifndef PSTRAIN_COMMON_JOB_RETENTION_POLICY_H_
#define PSTRAIN_COMMON_JOB_RETENTION_POLICY_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace pstrain {

// Which checkpoints of a job to delete: all but the newest max_to_keep,
// except any that a holder (an evaluator evaluating it, a watcher that was
// notified of it) holds a lease on, and never the newest. Thread-safe.
//
// A checkpoint chosen for deletion can no longer be leased, so an evaluator
// cannot start on a checkpoint as it is being deleted.
class RetentionPolicy {
 public:
  // max_to_keep 0 keeps every checkpoint (CheckpointSpec.max_to_keep);
  // negative values are taken as 0.
  explicit RetentionPolicy(int max_to_keep);

  RetentionPolicy(const RetentionPolicy&) = delete;
  RetentionPolicy& operator=(const RetentionPolicy&) = delete;

  // `holder` leases the checkpoint at `step`: it will not be deleted until
  // released. Leasing again is a no-op.
  // InvalidArgument: step < 0 or an empty holder.
  // NotFound: the checkpoint was chosen for deletion; use a newer one.
  absl::Status Acquire(int64_t step, absl::string_view holder);

  // NotFound: `holder` holds no lease on `step`.
  absl::Status Release(int64_t step, absl::string_view holder);

  // Releases every lease of `holder` (an evaluator that was lost, restarted
  // or ended its stream) and returns how many there were.
  int ReleaseHolder(absl::string_view holder);

  bool IsLeased(int64_t step) const;

  // Of `existing` (the steps of the checkpoints on disk, any order), those
  // to delete now, ascending: outside the newest max_to_keep, not leased,
  // never the newest. From then on they cannot be leased. Steps chosen
  // before that still exist (their deletion failed) are chosen again.
  std::vector<int64_t> ToDelete(absl::Span<const int64_t> existing);

 private:
  // Constant after construction.
  const int max_to_keep_;

  mutable absl::Mutex mu_;
  // step -> holders
  std::map<int64_t, std::set<std::string>> leases_ ABSL_GUARDED_BY(mu_);
  // Steps chosen for deletion that may still exist.
  std::set<int64_t> deleting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_RETENTION_POLICY_H_
