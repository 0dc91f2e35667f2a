#ifndef PSTRAIN_CLIENT_LOGS_COMMAND_H_
#define PSTRAIN_CLIENT_LOGS_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain logs JOB [--task=worker/0] [--follow]`: the lines a local
// cluster's processes logged while job JOB ran, from the logs `pstrain
// local` keeps in its run folder (TaskLogFile), picked by the job's start
// and end as its coordinator reports them. The cluster runs one job at a
// time, so every line logged in between is the job's. Exit codes: 0, 2
// bad usage or an unknown job or task (the message names those there
// are), 3 no `pstrain local` runs here or its coordinator cannot be
// reached.
Subcommand LogsCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOGS_COMMAND_H_
