#ifndef PSTRAIN_CLIENT_LIST_COMMAND_H_
#define PSTRAIN_CLIENT_LIST_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain list`: see its description for what it does and prints.
Subcommand ListCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LIST_COMMAND_H_
