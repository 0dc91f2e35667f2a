#ifndef PSTRAIN_CLIENT_VERSION_COMMAND_H_
#define PSTRAIN_CLIENT_VERSION_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain version` (and `pstrain --version`): the version and the git
// commit this pstrain was built from, as common/metrics/build_info.h's
// VersionText words them, the same BuildInfo the daemons' pstrain_build_info
// series carries. Exit code 0; 2 for an argument.
Subcommand VersionCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_VERSION_COMMAND_H_
