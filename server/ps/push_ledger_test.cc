#include "server/ps/push_ledger.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

LeaseSlice Slice(int64_t lease, int32_t epoch, int64_t begin, int64_t end) {
  return LeaseSlice{lease, epoch, begin, end};
}

std::vector<std::pair<int64_t, int64_t>> Applied(const LeaseProgress& p) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const RecordSpan& r : p.applied()) out.emplace_back(r.begin(), r.end());
  return out;
}

TEST(PushLedgerTest, DigestDoesNotDependOnOrderButOnEveryPush) {
  AppliedPushLedger a(7), b(7), c(7);
  const PushKey k1{0, 11, 1}, k2{1, 12, 1}, k3{0, 11, 2};
  a.RecordApplied(k1, 4, std::nullopt);
  a.RecordApplied(k2, 4, std::nullopt);
  a.RecordApplied(k3, 4, std::nullopt);
  b.RecordApplied(k3, 4, std::nullopt);
  b.RecordApplied(k1, 4, std::nullopt);
  b.RecordApplied(k2, 4, std::nullopt);
  EXPECT_EQ(a.applied_digest(), b.applied_digest());
  EXPECT_EQ(a.applied_pushes(), 3);
  EXPECT_EQ(a.applied_examples(), 12);
  // Applying one push twice instead of another shows in the digest even
  // though the count is the same.
  c.RecordApplied(k1, 4, std::nullopt);
  c.RecordApplied(k1, 4, std::nullopt);
  c.RecordApplied(k2, 4, std::nullopt);
  EXPECT_EQ(c.applied_pushes(), a.applied_pushes());
  EXPECT_NE(c.applied_digest(), a.applied_digest());
  // Worker and incarnation matter, not only the sequence.
  EXPECT_NE(AppliedPushLedger::PushDigest({0, 11, 1}), AppliedPushLedger::PushDigest({1, 11, 1}));
  EXPECT_NE(AppliedPushLedger::PushDigest({0, 11, 1}), AppliedPushLedger::PushDigest({0, 12, 1}));
}

TEST(PushLedgerTest, CoalescesTheRecordsOfALeaseAndKeepsHoles) {
  AppliedPushLedger ledger;
  ledger.RecordApplied({0, 1, 1}, 10, Slice(5, 2, 100, 110));
  ledger.RecordApplied({0, 1, 2}, 10, Slice(5, 2, 110, 120));
  ledger.RecordApplied({0, 1, 4}, 10, Slice(5, 2, 130, 140));  // 120-130 was stale
  PushLedger read = ledger.Read({5}, LedgerRead::kOnly);
  ASSERT_EQ(read.leases_size(), 1);
  EXPECT_EQ(read.leases(0).epoch(), 2);
  EXPECT_FALSE(read.leases(0).sealed());
  EXPECT_THAT(Applied(read.leases(0)),
              ::testing::ElementsAre(std::make_pair(100, 120), std::make_pair(130, 140)));
  ledger.RecordApplied({0, 1, 5}, 10, Slice(5, 2, 120, 130));
  EXPECT_THAT(Applied(ledger.Read({5}, LedgerRead::kOnly).leases(0)),
              ::testing::ElementsAre(std::make_pair(100, 140)));
}

TEST(PushLedgerTest, ReadsUnknownLeasesAsNothingAppliedAndSealsThem) {
  AppliedPushLedger ledger;
  ledger.RecordApplied({0, 1, 1}, 1, Slice(5, 0, 0, 8));
  PushLedger read = ledger.Read({5, 6}, LedgerRead::kSeal);
  ASSERT_EQ(read.leases_size(), 2);
  EXPECT_TRUE(read.leases(0).sealed());
  EXPECT_EQ(read.leases(1).applied_size(), 0);
  EXPECT_TRUE(ledger.Sealed(5));
  EXPECT_TRUE(ledger.Sealed(6));
  EXPECT_FALSE(ledger.Sealed(7));
}

TEST(PushLedgerTest, ForgetsTheOldestLeasesPastItsBound) {
  AppliedPushLedger ledger(0, /*max_leases=*/2);
  for (int64_t lease = 1; lease <= 3; ++lease) {
    ledger.RecordApplied({0, 1, static_cast<uint64_t>(lease)}, 1, Slice(lease, 0, 0, 1));
  }
  PushLedger all = ledger.Read({}, LedgerRead::kOnly);
  ASSERT_EQ(all.leases_size(), 2);
  EXPECT_EQ(all.leases(0).lease_id(), 2);
  EXPECT_EQ(all.leases(1).lease_id(), 3);
  EXPECT_EQ(all.applied_pushes(), 3);  // the counters are not bounded
}

TEST(PushLedgerTest, RoundTripsThroughItsProtoKeepingTheNewGeneration) {
  AppliedPushLedger ledger(3);
  ledger.RecordApplied({0, 1, 1}, 4, Slice(5, 1, 0, 4));
  ledger.RecordApplied({1, 2, 1}, 4, Slice(6, 1, 4, 8));
  ledger.Read({6}, LedgerRead::kSeal);
  absl::StatusOr<AppliedPushLedger> back = AppliedPushLedger::FromProto(ledger.ToProto(), 9);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->generation(), 9u);
  EXPECT_EQ(back->applied_digest(), ledger.applied_digest());
  EXPECT_EQ(back->applied_pushes(), 2);
  EXPECT_EQ(back->applied_examples(), 8);
  EXPECT_TRUE(back->Sealed(6));
  EXPECT_EQ(back->ToProto().leases_size(), 2);

  PushLedger bad = ledger.ToProto();
  RecordSpan* r = bad.mutable_leases(0)->add_applied();
  r->set_begin(2);
  r->set_end(3);  // overlaps [0, 4)
  EXPECT_EQ(AppliedPushLedger::FromProto(bad, 9).status().code(), absl::StatusCode::kDataLoss);
}

TEST(PushLedgerTest, ValidatesAPushOrigin) {
  PushOrigin origin;
  origin.set_lease_id(3);
  origin.set_epoch(1);
  origin.mutable_records()->set_begin(10);
  origin.mutable_records()->set_end(20);
  absl::StatusOr<LeaseSlice> slice = LeaseSliceFromProto(origin);
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->begin, 10);
  origin.mutable_records()->set_end(10);
  EXPECT_THAT(LeaseSliceFromProto(origin).status().message(), ::testing::HasSubstr("origin.records"));
  origin.set_lease_id(0);
  EXPECT_THAT(LeaseSliceFromProto(origin).status().message(),
              ::testing::HasSubstr("origin.lease_id"));
}

TEST(PushLedgerTest, ExactlyOnceRecordCarriesTheLedgerAndReadsOldRecords) {
  AppliedPushLedger ledger(1);
  ledger.RecordApplied({0, 1, 1}, 4, Slice(5, 1, 0, 4));
  const std::string dedup = "dedup-bytes";
  const std::string record = EncodeExactlyOnceRecord(dedup, ledger.ToProto());
  absl::StatusOr<ExactlyOnceRecord> decoded = DecodeExactlyOnceRecord(record);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->dedup, dedup);
  EXPECT_EQ(decoded->ledger.applied_digest(), ledger.applied_digest());
  // A record written before the ledger existed is all dedup state.
  absl::StatusOr<ExactlyOnceRecord> old = DecodeExactlyOnceRecord(dedup);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->dedup, dedup);
  EXPECT_EQ(old->ledger.applied_pushes(), 0);
  // A damaged trailer is refused.
  std::string damaged = record;
  damaged[damaged.size() - 16] = '\x7f';
  EXPECT_EQ(DecodeExactlyOnceRecord(damaged).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace pstrain
