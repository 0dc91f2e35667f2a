#include "common/status/error_reason.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// The payload's key. Short, since absl::Status prints payloads with the
// message: "[pstrain.reason='NO_FREE_LEASE']".
constexpr absl::string_view kReasonKey = "pstrain.reason";
constexpr absl::string_view kPrefix = "ERROR_REASON_";

}  // namespace

absl::Status WithReason(absl::Status status, ErrorReason reason) {
  if (status.ok() || reason == ERROR_REASON_UNSPECIFIED) return status;
  const std::string& name = ErrorReason_Name(reason);
  status.SetPayload(kReasonKey, absl::Cord(absl::string_view(name).substr(kPrefix.size())));
  return status;
}

ErrorReason ReasonOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kReasonKey);
  if (!payload.has_value()) return ERROR_REASON_UNSPECIFIED;
  ErrorReason reason = ERROR_REASON_UNSPECIFIED;
  if (!ErrorReason_Parse(absl::StrCat(kPrefix, std::string(*payload)), &reason)) {
    return ERROR_REASON_UNSPECIFIED;
  }
  return reason;
}

absl::Status WithPrefix(absl::Status status, absl::string_view prefix) {
  if (status.ok()) return status;
  absl::Status prefixed(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&prefixed](absl::string_view key, const absl::Cord& value) {
    prefixed.SetPayload(key, value);
  });
  return prefixed;
}

bool NeedsRegistration(const absl::Status& status) {
  switch (ReasonOf(status)) {
    case ERROR_REASON_MEMBER_UNKNOWN:
    case ERROR_REASON_MEMBER_LOST:
    case ERROR_REASON_STALE_INCARNATION:
      return true;
    default:
      return false;
  }
}

bool EndsRun(const absl::Status& status) {
  switch (ReasonOf(status)) {
    case ERROR_REASON_JOB_ENDED:
    case ERROR_REASON_JOB_NOT_STARTED:
    case ERROR_REASON_RUN_ROLLED_BACK:
    case ERROR_REASON_INCARNATION_SUPERSEDED:
      return true;
    default:
      return DataHandedOver(status);
  }
}

bool DataHandedOver(const absl::Status& status) {
  const ErrorReason reason = ReasonOf(status);
  return reason == ERROR_REASON_MEMBERSHIP_LAPSED || reason == ERROR_REASON_LEASE_SEALED;
}

}  // namespace pstrain
