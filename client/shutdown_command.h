#ifndef PSTRAIN_CLIENT_SHUTDOWN_COMMAND_H_
#define PSTRAIN_CLIENT_SHUTDOWN_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain shutdown`: see its description for what it does and prints.
Subcommand ShutdownCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_SHUTDOWN_COMMAND_H_
