#ifndef PSTRAIN_SERVER_PS_PUSH_LEDGER_H_
#define PSTRAIN_SERVER_PS_PUSH_LEDGER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/push_dedup.h"

namespace pstrain {

// Records [begin, end) of data lease `lease_id` in epoch `epoch`: where one
// push's gradients came from (PushOrigin).
struct LeaseSlice {
  int64_t lease_id = 0;
  int32_t epoch = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

// What a push's gradients came from, for the shard's AppliedPushLedger.
struct PushSource {
  int64_t examples = 0;
  // Unset: the push names no data lease (its progress is not recorded).
  std::optional<LeaseSlice> origin;
};

// InvalidArgument naming the field: a lease id <= 0, a negative epoch or
// begin, or an empty or reversed range.
absl::StatusOr<LeaseSlice> LeaseSliceFromProto(const PushOrigin& origin);

// A push's examples and origin (an invalid origin is left unset).
PushSource PushSourceOf(const PushRequest& push);

// Whether reading leases' progress also seals them (ReadPushLedgerRequest.
// seal): later pushes of a sealed lease are refused, so what was read
// stays true while the coordinator hands the rest of the lease back.
enum class LedgerRead {
  kOnly,
  kSeal,
};

// What one shard applied in one run of a job: how many pushes, the examples
// behind them, an order-independent digest of their ids, and per data lease
// the records they trained on. It is what lets the coordinator hand back
// only the untrained rest of a lost worker's lease, and lets a test prove
// that no push was applied twice (two shards that applied the same pushes
// have equal counts and digests). Saved with the shard's snapshot. Not
// thread-safe (the shard guards it with its own lock).
class AppliedPushLedger {
 public:
  // `max_leases` > 0: leases remembered; the oldest is forgotten past it.
  // Default 4096: a worker holds one lease at a time, so only the newest
  // few matter when it is lost; the rest bound the snapshot's size (about
  // 40 bytes a lease).
  explicit AppliedPushLedger(uint64_t generation = 0, int max_leases = 4096);

  // The order-independent contribution of one push to the digest:
  // splitmix64's finaliser chained over worker, incarnation and sequence.
  static uint64_t PushDigest(const PushKey& key);

  // Whether pushes of `lease_id` are refused (its lease was handed back).
  bool Sealed(int64_t lease_id) const;

  // Books one applied push of `examples` examples, from `origin` if known.
  void RecordApplied(const PushKey& key, int64_t examples, const std::optional<LeaseSlice>& origin);

  // The counters and the progress of `lease_ids` (every lease remembered
  // when empty; a lease never pushed is listed with nothing applied). With
  // LedgerRead::kSeal, those leases are sealed first, so the answer stays
  // true.
  PushLedger Read(absl::Span<const int64_t> lease_ids, LedgerRead read);

  // Everything, for a snapshot.
  PushLedger ToProto() const;
  // The inverse of ToProto, keeping this ledger's generation (a restored
  // run continues the counts of its checkpoint). DataLoss: a lease whose
  // ranges are empty, reversed or overlapping.
  static absl::StatusOr<AppliedPushLedger> FromProto(const PushLedger& proto, uint64_t generation,
                                                     int max_leases = 4096);

  int64_t applied_pushes() const { return applied_pushes_; }
  int64_t applied_examples() const { return applied_examples_; }
  uint64_t applied_digest() const { return applied_digest_; }
  uint64_t generation() const { return generation_; }

 private:
  struct Lease {
    int32_t epoch = 0;
    // Coalesced and sorted by begin.
    std::vector<std::pair<int64_t, int64_t>> applied;
    bool sealed = false;
  };

  Lease& Touch(int64_t lease_id, int32_t epoch);
  static void AddRange(Lease& lease, int64_t begin, int64_t end);
  LeaseProgress ProgressOf(int64_t lease_id) const;

  uint64_t generation_;
  int max_leases_;
  int64_t applied_pushes_ = 0;
  int64_t applied_examples_ = 0;
  uint64_t applied_digest_ = 0;
  std::map<int64_t, Lease> leases_;
  // Lease ids in the order first seen, to forget the oldest.
  std::deque<int64_t> order_;
};

// The shard file's exactly-once record: the dedup state followed by the
// ledger (a trailer, so files written before the ledger existed still
// read: they restore an empty ledger).
std::string EncodeExactlyOnceRecord(absl::string_view dedup, const PushLedger& ledger);
struct ExactlyOnceRecord {
  absl::string_view dedup;
  PushLedger ledger;
};
// DataLoss: a trailer that does not decode.
absl::StatusOr<ExactlyOnceRecord> DecodeExactlyOnceRecord(absl::string_view bytes);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PUSH_LEDGER_H_
