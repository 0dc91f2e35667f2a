#ifndef PSTRAIN_COMMON_NET_COORDINATOR_ADDRESS_FLAG_H_
#define PSTRAIN_COMMON_NET_COORDINATOR_ADDRESS_FLAG_H_

// --coordinator_address, defined once for the daemons (which dial it) and
// the `pstrain` client (which dials it, or with `pstrain local` listens on
// it), so the same idea has the same name everywhere. Each reader applies
// its own default: TF_CONFIG's chief for a daemon, $PSTRAIN_COORDINATOR or
// localhost:7070 for the client.

#include <string>

#include "gflags/gflags.h"

DECLARE_string(coordinator_address);

#endif  // PSTRAIN_COMMON_NET_COORDINATOR_ADDRESS_FLAG_H_
