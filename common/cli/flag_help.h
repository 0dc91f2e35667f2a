#ifndef PSTRAIN_COMMON_CLI_FLAG_HELP_H_
#define PSTRAIN_COMMON_CLI_FLAG_HELP_H_

// How --help shows one flag, shared by the daemons' help and the per-command
// help of `pstrain`.

#include <string>

#include "absl/strings/string_view.h"
#include "gflags/gflags.h"

namespace pstrain {

// True for flags defined in pstrain's own source folders; the logging and
// flag libraries' flags are not (--helpfull shows those).
bool IsOwnFlag(const gflags::CommandLineFlagInfo& flag);

// "  --name=N\n      description (default: 3)\n".
std::string FormatFlagHelp(const gflags::CommandLineFlagInfo& flag);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLI_FLAG_HELP_H_
