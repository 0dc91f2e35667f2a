#ifndef PSTRAIN_CLIENT_SUBMIT_COMMAND_H_
#define PSTRAIN_CLIENT_SUBMIT_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain submit`: see its description for what it does and prints.
Subcommand SubmitCommand();
// `pstrain validate`: the coordinator's checks of a job, queueing nothing.
Subcommand ValidateCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_SUBMIT_COMMAND_H_
