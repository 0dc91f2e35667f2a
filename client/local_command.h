#ifndef PSTRAIN_CLIENT_LOCAL_COMMAND_H_
#define PSTRAIN_CLIENT_LOCAL_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain local [JOB.pbtxt]`: runs a whole cluster on this machine as real
// processes on loopback; with a job spec, submits it, shows its progress and
// prints its final metrics; then stops every process. Exit codes: 0
// success, 1 the job failed or was stopped or a process died or did not
// exit cleanly, 2 bad usage or an invalid spec.
Subcommand LocalCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_COMMAND_H_
