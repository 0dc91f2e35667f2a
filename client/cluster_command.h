#ifndef PSTRAIN_CLIENT_CLUSTER_COMMAND_H_
#define PSTRAIN_CLIENT_CLUSTER_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain cluster`: see its description for what it does and prints.
Subcommand ClusterCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_CLUSTER_COMMAND_H_
