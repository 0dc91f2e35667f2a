#ifndef PSTRAIN_CLIENT_SCALE_COMMAND_H_
#define PSTRAIN_CLIENT_SCALE_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain scale`: see its description for what it does and prints.
Subcommand ScaleCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_SCALE_COMMAND_H_
