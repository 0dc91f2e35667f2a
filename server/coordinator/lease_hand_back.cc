#include "server/coordinator/lease_hand_back.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

LeaseHandBack::LeaseHandBack(std::string job_id, const TrainingGeneration& generation,
                             const JobControl& control)
    : job_id_(std::move(job_id)), generation_(generation), control_(control) {}

std::optional<AppliedRecords> LeaseHandBack::ReadApplied(const std::vector<DataLease>& leases,
                                                         const std::string& holder) const {
  const JobPhase phase = control_.phase();
  if (phase != JobPhase::kTraining && phase != JobPhase::kFinishing) return std::nullopt;
  const std::shared_ptr<ShardGroup> shards = generation_.shards();
  if (shards == nullptr) return std::nullopt;
  ReadPushLedgerRequest request;
  request.set_job_id(job_id_);
  for (const DataLease& lease : leases) request.add_lease_ids(lease.lease_id());
  request.set_seal(true);
  std::vector<PushLedger> ledgers(shards->size());
  std::vector<bool> answered(shards->size(), false);
  const absl::Status read = shards->ForEach([&](int i, ShardClient& client) -> absl::Status {
    absl::StatusOr<PushLedger> ledger = client.ReadPushLedger(request);
    if (!ledger.ok()) return ledger.status();
    ledgers[i] = *std::move(ledger);
    answered[i] = true;
    return absl::OkStatus();
  });
  std::vector<PushLedger> known;
  for (size_t i = 0; i < ledgers.size(); ++i) {
    if (answered[i]) known.push_back(std::move(ledgers[i]));
  }
  if (!read.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": reading the push ledgers for " << holder
                 << "'s leases: " << read << "; " << known.size() << " of " << shards->size()
                 << " shards answered";
  }
  // A push applied on some shards but not on others counts as trained:
  // training its records again would apply them twice on the shards that
  // have it (MergeLedgers takes the union).
  return MergeLedgers(known);
}

std::string LeaseHandBack::ReturnUntrained(DataLeaseManager& data,
                                           const std::string& holder) const {
  const std::vector<DataLease> leases = data.LeasesOf(holder);
  if (leases.empty()) return "";
  const std::optional<AppliedRecords> applied = ReadApplied(leases, holder);
  if (!applied.has_value()) return "";
  int64_t records = 0;
  int handed = 0;
  for (const DataLease& lease : leases) {
    const std::vector<RecordRange> trained =
        AppliedWithin(*applied, lease.lease_id(), lease.range().begin(), lease.range().end());
    if (trained.empty()) continue;
    absl::Status status = data.HandBackUntrained(lease.lease_id(), holder, trained);
    if (!status.ok()) {
      // Expired or voided meanwhile (a rollback): its records went back whole.
      LOG(WARNING) << "job " << job_id_ << ": data lease " << lease.lease_id() << " of " << holder
                   << ": " << status;
      continue;
    }
    ++handed;
    for (const RecordRange& r : trained) records += r.end() - r.begin();
  }
  if (handed == 0) return "";
  return absl::StrCat(records, " records of ", handed, handed == 1 ? " data lease" : " data leases",
                      " were trained by its applied pushes and count as finished; ");
}

absl::Status LeaseHandBack::CompleteUnknownOutcome(DataLeaseManager& data,
                                                   const std::string& holder,
                                                   int64_t lease_id) const {
  std::optional<DataLease> lease;
  for (const DataLease& held : data.LeasesOf(holder)) {
    if (held.lease_id() == lease_id) lease = held;
  }
  // Unknown to the coordinator: Complete says why, as for any lease.
  if (!lease.has_value()) return data.Complete(lease_id, holder, {});
  const std::optional<AppliedRecords> applied = ReadApplied({*lease}, holder);
  if (!applied.has_value()) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "job ", job_id_, " is rolling back; data lease ", lease_id, " is void")),
                      ERROR_REASON_RUN_ROLLED_BACK);
  }
  const std::vector<RecordRange> trained =
      AppliedWithin(*applied, lease_id, lease->range().begin(), lease->range().end());
  int64_t trained_records = 0;
  for (const RecordRange& r : trained) trained_records += r.end() - r.begin();
  LOG(INFO) << "job " << job_id_ << ": " << holder << " hands back data lease " << lease_id
            << " with a push of unknown outcome; its shards applied " << trained_records << " of "
            << lease->range().end() - lease->range().begin() << " records";
  return data.HandBackUntrained(lease_id, holder, trained);
}

}  // namespace coordinator
}  // namespace pstrain
