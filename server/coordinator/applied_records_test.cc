#include "server/coordinator/applied_records.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

void Add(PushLedger& ledger, int64_t lease, int32_t epoch, std::vector<std::pair<int, int>> rs) {
  LeaseProgress* p = ledger.add_leases();
  p->set_lease_id(lease);
  p->set_epoch(epoch);
  for (auto [b, e] : rs) {
    RecordSpan* r = p->add_applied();
    r->set_begin(b);
    r->set_end(e);
  }
}

std::string Text(const google::protobuf::RepeatedPtrField<RecordRange>& ranges) {
  std::string out;
  for (const RecordRange& r : ranges) {
    out += "[" + std::to_string(r.begin()) + "," + std::to_string(r.end()) + ")";
  }
  return out;
}

TEST(AppliedRecordsTest, APushOnAnyShardCountsAsTrained) {
  PushLedger ps0, ps1;
  Add(ps0, 7, 0, {{0, 8}});
  Add(ps1, 7, 0, {{0, 16}});  // the push of [8, 16) reached only ps/1 so far
  Add(ps1, 9, 1, {{32, 40}});
  Add(ps0, 11, 0, {});  // sealed before any push: nothing
  const AppliedRecords merged = MergeLedgers({ps0, ps1});
  ASSERT_EQ(merged.size(), 2u);
  ASSERT_EQ(merged.at(7).applied.size(), 1u);
  EXPECT_EQ(merged.at(7).applied[0].end, 16);
  EXPECT_EQ(merged.at(9).epoch, 1);

  const std::vector<RecordRange> within = AppliedWithin(merged, 7, 4, 12);
  ASSERT_EQ(within.size(), 1u);
  EXPECT_EQ(within[0].begin(), 4);
  EXPECT_EQ(within[0].end(), 12);
  EXPECT_TRUE(AppliedWithin(merged, 8, 0, 100).empty());
}

TEST(AppliedRecordsTest, PositionCountsTheAppliedRecordsOfItsEpochAndTheNext) {
  PushLedger ledger;
  Add(ledger, 1, 0, {{0, 8}});       // an old lease of a finished epoch
  Add(ledger, 2, 1, {{8, 12}});      // outstanding in the current epoch
  Add(ledger, 3, 1, {{16, 24}});     // completed since: already finished
  Add(ledger, 4, 2, {{0, 4}});       // the next epoch, handed out early
  Add(ledger, 5, 1, {{90, 120}});    // past the data: clipped
  DataPosition position;
  position.set_epoch(1);
  position.set_num_records(100);
  RecordRange* done = position.add_finished();
  done->set_begin(16);
  done->set_end(24);
  const DataPosition out = WithAppliedRecords(position, MergeLedgers({ledger}));
  EXPECT_EQ(out.epoch(), 1);
  EXPECT_EQ(Text(out.finished()), "[8,12)[16,24)[90,100)");
  EXPECT_EQ(Text(out.next_epoch_finished()), "[0,4)");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
