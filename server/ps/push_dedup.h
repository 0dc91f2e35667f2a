#ifndef PSTRAIN_SERVER_PS_PUSH_DEDUP_H_
#define PSTRAIN_SERVER_PS_PUSH_DEDUP_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// Identifies one push: a worker, the incarnation of its process, and the
// sequence number of the push within that incarnation.
struct PushKey {
  int32_t worker = 0;
  uint64_t incarnation = 0;
  uint64_t sequence = 0;

  friend bool operator==(const PushKey& a, const PushKey& b) {
    return a.worker == b.worker && a.incarnation == b.incarnation && a.sequence == b.sequence;
  }
};

// The pushes a shard has already decided, so that a retried push is applied
// at most once (as TensorFlow's RecentRequestIds does for requests). Per
// worker it keeps the newest incarnation and, within it, the outcomes of the
// last `window` sequences; everything below that window counts as seen.
// Memory is bounded by workers * window. Not thread-safe (the shard guards
// it with its own lock).
class PushDedup {
 public:
  // `window` > 0: outcomes remembered per worker. A worker may have at most
  // this many pushes in flight and still be deduplicated exactly.
  explicit PushDedup(int window = 1024) : window_(window) {}

  enum class Verdict {
    kNew,             // never decided: go ahead
    kSeen,            // decided before; `outcome` says how
    kOldIncarnation,  // the worker has restarted since: refuse
  };
  struct Lookup {
    Verdict verdict = Verdict::kNew;
    // For kSeen: APPLIED, AGGREGATED or STALE as first decided; DUPLICATE
    // when the sequence fell below the window.
    PushOutcome outcome = PUSH_OUTCOME_UNSPECIFIED;
    uint64_t current_incarnation = 0;
  };
  Lookup Check(const PushKey& key) const;

  // Remembers the outcome of a new push. A newer incarnation forgets the
  // worker's older one.
  void Record(const PushKey& key, PushOutcome outcome);

  // Forgets one decided push (a sync round's contribution lost with the
  // round, so that its retry is accepted again).
  void Forget(const PushKey& key);

  int64_t size() const;

  // A compact binary form for snapshots, and its inverse. Parse returns
  // DataLoss for bytes that do not decode.
  std::string Serialize() const;
  static absl::StatusOr<PushDedup> Parse(absl::string_view bytes, int window);

  friend bool operator==(const PushDedup& a, const PushDedup& b);

 private:
  struct Worker {
    uint64_t incarnation = 0;
    // Every sequence below `floor` counts as seen.
    uint64_t floor = 0;
    std::map<uint64_t, PushOutcome> recent;
    friend bool operator==(const Worker& a, const Worker& b) {
      return a.incarnation == b.incarnation && a.floor == b.floor && a.recent == b.recent;
    }
  };

  int window_;
  absl::flat_hash_map<int32_t, Worker> workers_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PUSH_DEDUP_H_
