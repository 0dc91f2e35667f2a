#ifndef PSTRAIN_CLIENT_STATUS_COMMAND_H_
#define PSTRAIN_CLIENT_STATUS_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain status`: see its description for what it does and prints.
Subcommand StatusCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_STATUS_COMMAND_H_
