#include "tests/push_ledgers.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/shard_file.h"
#include "gtest/gtest.h"
#include "server/ps/push_ledger.h"

namespace pstrain {
namespace testing_ledgers {
namespace {

// Per epoch, every lease's applied ranges on one shard, sorted.
std::map<int32_t, std::vector<LeaseRange>> RangesByEpoch(const PushLedger& ledger) {
  std::map<int32_t, std::vector<LeaseRange>> epochs;
  for (const LeaseProgress& lease : ledger.leases()) {
    for (const RecordSpan& r : lease.applied()) {
      epochs[lease.epoch()].push_back({lease.lease_id(), r.begin(), r.end()});
    }
  }
  for (auto& [epoch, ranges] : epochs) {
    std::sort(ranges.begin(), ranges.end(),
              [](const LeaseRange& a, const LeaseRange& b) { return a.begin < b.begin; });
  }
  return epochs;
}

}  // namespace

std::vector<PushLedger> FinalLedgers(const JobStatus& status, DataPosition* position) {
  std::vector<PushLedger> ledgers;
  EXPECT_GT(status.checkpoints_size(), 0);
  if (status.checkpoints_size() == 0) return ledgers;
  const CheckpointInfo& last = status.checkpoints(status.checkpoints_size() - 1);
  EXPECT_TRUE(last.final()) << last.path();
  PosixEnv env;
  absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env, last.path());
  EXPECT_TRUE(manifest.ok()) << manifest.status();
  if (!manifest.ok()) return ledgers;
  if (position != nullptr) *position = manifest->data_position();
  for (const CheckpointShardFile& file : manifest->shards()) {
    absl::StatusOr<std::unique_ptr<ShardFileReader>> reader =
        ShardFileReader::Open(env, absl::StrCat(last.path(), "/", file.name()));
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return {};
    absl::StatusOr<ExactlyOnceRecord> record = DecodeExactlyOnceRecord((*reader)->dedup_state());
    EXPECT_TRUE(record.ok()) << record.status();
    if (!record.ok()) return {};
    ledgers.push_back(record->ledger);
  }
  return ledgers;
}

void ExpectEveryRecordOnce(const PushLedger& ledger, const std::string& shard, int64_t num_records,
                           int32_t epochs, const std::optional<LeaseRange>& missing_push) {
  const auto by_epoch = RangesByEpoch(ledger);
  EXPECT_EQ(static_cast<int32_t>(by_epoch.size()), epochs) << shard;
  for (const auto& [epoch, ranges] : by_epoch) {
    int64_t covered = 0;
    for (const LeaseRange& r : ranges) {
      if (missing_push.has_value() && covered == missing_push->begin &&
          r.begin == missing_push->end) {
        covered = missing_push->end;
      }
      EXPECT_EQ(r.begin, covered) << shard << " epoch " << epoch << ": records [" << r.begin << ", "
                                  << r.end << ") of lease " << r.lease_id
                                  << (r.begin < covered ? " were trained twice"
                                                        : " follow a gap: records skipped");
      covered = std::max(covered, r.end);
    }
    EXPECT_EQ(covered, num_records) << shard << " epoch " << epoch << " ends early";
  }
}

int64_t ExpectNoRecordTwice(const PushLedger& ledger, const std::string& shard) {
  int64_t records = 0;
  for (const auto& [epoch, ranges] : RangesByEpoch(ledger)) {
    int64_t covered = 0;
    for (const LeaseRange& r : ranges) {
      EXPECT_GE(r.begin, covered) << shard << " epoch " << epoch << ": records [" << r.begin
                                  << ", " << r.end << ") of lease " << r.lease_id
                                  << " were trained twice";
      records += r.end - std::max(r.begin, covered);
      covered = std::max(covered, r.end);
    }
  }
  return records;
}

std::optional<LeaseRange> OnlyOn(const PushLedger& has, const PushLedger& lacks) {
  std::vector<LeaseRange> extra;
  const auto lacking = RangesByEpoch(lacks);
  for (const auto& [epoch, ranges] : RangesByEpoch(has)) {
    auto other = lacking.find(epoch);
    for (const LeaseRange& r : ranges) {
      int64_t begin = r.begin;
      if (other != lacking.end()) {
        for (const LeaseRange& o : other->second) {
          if (o.lease_id == r.lease_id && o.begin <= begin && o.end > begin) {
            begin = std::min(r.end, o.end);
          }
        }
      }
      if (begin < r.end) extra.push_back({r.lease_id, begin, r.end});
    }
  }
  if (extra.empty()) return std::nullopt;
  EXPECT_EQ(extra.size(), 1u) << "shards differ by more than one push";
  return extra[0];
}

bool ExpectTwoShardsTrainedEveryRecordOnce(const std::vector<PushLedger>& ledgers,
                                           int64_t num_records, int32_t epochs) {
  EXPECT_EQ(ledgers.size(), 2u);
  if (ledgers.size() != 2) return false;
  const std::optional<LeaseRange> only_on_0 = OnlyOn(ledgers[0], ledgers[1]);
  const std::optional<LeaseRange> only_on_1 = OnlyOn(ledgers[1], ledgers[0]);
  EXPECT_FALSE(only_on_0.has_value() && only_on_1.has_value());
  for (int i = 0; i < 2; ++i) {
    const std::string shard = absl::StrCat("ps/", i);
    const std::optional<LeaseRange>& missing = i == 0 ? only_on_1 : only_on_0;
    const int64_t missing_examples = missing.has_value() ? missing->end - missing->begin : 0;
    EXPECT_EQ(ledgers[i].applied_examples() + missing_examples, num_records * epochs) << shard;
    ExpectEveryRecordOnce(ledgers[i], shard, num_records, epochs, missing);
  }
  if (!only_on_0.has_value() && !only_on_1.has_value()) {
    EXPECT_EQ(ledgers[0].applied_pushes(), ledgers[1].applied_pushes());
    EXPECT_EQ(ledgers[0].applied_digest(), ledgers[1].applied_digest());
    return false;
  }
  EXPECT_EQ(std::abs(ledgers[0].applied_pushes() - ledgers[1].applied_pushes()), 1);
  return true;
}

}  // namespace testing_ledgers
}  // namespace pstrain
