#include "common/cluster/member_refusal.h"

#include "common/status/error_reason.h"

namespace pstrain {

bool IsFinalRefusal(const absl::Status& status) {
  if (status.ok()) return false;
  return ReasonOf(status) == ERROR_REASON_PROCESS_REPLACED || absl::IsInvalidArgument(status) ||
         absl::IsCancelled(status);
}

}  // namespace pstrain
