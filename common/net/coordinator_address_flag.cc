#include "common/net/coordinator_address_flag.h"

// Empty by default: a daemon's set flag overrides TF_CONFIG, so a non-empty
// default would always override it.
DEFINE_string(coordinator_address, "",
              "host:port of the coordinator. Daemons: required for every role but the "
              "coordinator, here or as TF_CONFIG's chief. `pstrain`: default "
              "$PSTRAIN_COORDINATOR, else localhost:7070 (where `pstrain local` puts its "
              "coordinator when that port is free).");
