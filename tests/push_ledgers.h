#ifndef PSTRAIN_TESTS_PUSH_LEDGERS_H_
#define PSTRAIN_TESTS_PUSH_LEDGERS_H_

// What end-to-end tests read of the push ledgers a job's final checkpoint
// holds (server/ps/push_ledger.h), one per shard: per data lease the
// records its applied pushes trained on, so that a test can tell whether
// every record of every epoch was trained exactly once.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protos/checkpoint.pb.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace testing_ledgers {

// The push ledgers saved in the job's final checkpoint, shard by shard,
// and (if `position` is given) its data position. Empty, with a test
// failure, when the checkpoint cannot be read.
std::vector<PushLedger> FinalLedgers(const JobStatus& status, DataPosition* position = nullptr);

// Records [begin, end) of one data lease, as one shard applied them.
struct LeaseRange {
  int64_t lease_id = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

// The records of every epoch on `ledger`'s shard, each applied exactly
// once: the leases' applied ranges tile [0, num_records) in each of
// `epochs` epochs, none overlapping another (a record trained twice) and
// no gap (a record skipped), except that `missing_push` (a push the shard
// never received because its worker died or was cut off mid-push; applied
// on the other shard, so it counts as trained) may be a gap.
void ExpectEveryRecordOnce(const PushLedger& ledger, const std::string& shard, int64_t num_records,
                           int32_t epochs,
                           const std::optional<LeaseRange>& missing_push = std::nullopt);

// No record of any epoch applied twice on `ledger`'s shard (records may be
// left: a job that ended at max_steps). The records it applied.
int64_t ExpectNoRecordTwice(const PushLedger& ledger, const std::string& shard);

// The records one shard applied that the other did not: at most one push
// when a worker was lost while pushing, none otherwise.
std::optional<LeaseRange> OnlyOn(const PushLedger& has, const PushLedger& lacks);

// Both shards' ledgers (every variable on both, so every push reaches
// both): each shard applied every record of every epoch once, but for one
// push that may have reached one shard only. True when one did.
bool ExpectTwoShardsTrainedEveryRecordOnce(const std::vector<PushLedger>& ledgers,
                                           int64_t num_records, int32_t epochs);

}  // namespace testing_ledgers
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_PUSH_LEDGERS_H_
