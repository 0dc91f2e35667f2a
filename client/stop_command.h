#ifndef PSTRAIN_CLIENT_STOP_COMMAND_H_
#define PSTRAIN_CLIENT_STOP_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain stop`: see its description for what it does and prints.
Subcommand StopCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_STOP_COMMAND_H_
