#ifndef PSTRAIN_CLIENT_WATCH_COMMAND_H_
#define PSTRAIN_CLIENT_WATCH_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain watch`: see its description for what it does and prints.
Subcommand WatchCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_WATCH_COMMAND_H_
