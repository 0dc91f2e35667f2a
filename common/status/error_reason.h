#ifndef PSTRAIN_COMMON_STATUS_ERROR_REASON_H_
#define PSTRAIN_COMMON_STATUS_ERROR_REASON_H_

// A status's ErrorReason (protos/status.proto): why a call failed, beyond
// its code, so that a caller acts on what happened rather than on a code
// that means several things. Kept as a payload of the absl::Status, so it
// survives being passed up and, through common/status/grpc_status.h, being
// sent over gRPC.
//
//   return WithReason(absl::UnavailableError("every range is leased out"),
//                     ERROR_REASON_NO_FREE_LEASE);
//   ...
//   if (ReasonOf(lease.status()) == ERROR_REASON_NO_FREE_LEASE) wait();

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "protos/status.pb.h"

namespace pstrain {

// `status` with `reason` attached (replacing any). An OK status, or
// ERROR_REASON_UNSPECIFIED, is returned unchanged.
absl::Status WithReason(absl::Status status, ErrorReason reason);

// The reason attached to `status`; ERROR_REASON_UNSPECIFIED when none (or
// when it names a reason this build does not know).
ErrorReason ReasonOf(const absl::Status& status);

// `prefix` + `status`'s message, with its code and its reason (every
// payload) kept: for naming where an error came from as it is passed up.
absl::Status WithPrefix(absl::Status status, absl::string_view prefix);

// Whether registering again (with the same incarnation) and repeating the
// call may succeed: the coordinator does not know the caller as it is.
bool NeedsRegistration(const absl::Status& status);

// Whether the run of a job the caller works on is over for it: stop
// working on it and take the job's current assignment. The job ended or
// does not run (JOB_ENDED, JOB_NOT_STARTED), the run rolled back
// (RUN_ROLLED_BACK), the caller's part in it was handed to others
// (DataHandedOver) or its pushes were replaced by a newer incarnation's
// (INCARNATION_SUPERSEDED).
bool EndsRun(const absl::Status& status);

// Whether a parameter server refused a push because the worker's data may
// be someone else's now: its membership could have lapsed
// (MEMBERSHIP_LAPSED) or its lease was handed back (LEASE_SEALED). The
// worker stops the run as one marked lost.
bool DataHandedOver(const absl::Status& status);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_STATUS_ERROR_REASON_H_
