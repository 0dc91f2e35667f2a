#ifndef PSTRAIN_CLIENT_TRAIN_LOCAL_COMMAND_H_
#define PSTRAIN_CLIENT_TRAIN_LOCAL_COMMAND_H_

#include <string>
#include <vector>

#include "common/checkpoint/env.h"
#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain train-local JOB_SPEC`: trains the job in this process (no
// cluster), evaluates it on its eval_data and prints the result: as text,
// or with --output=json as one JSON object holding state, examples_per_sec,
// global_step, train_seconds, examples, stop_reason, reason and every final
// evaluation metric by name ("accuracy", "loss", ...). --max_steps replaces
// the spec's stop.max_steps. `args` are the positional arguments after the
// command. Returns the process exit code: 0 when training ended normally,
// 1 on an error, a NaN loss or checkpoint.max_consecutive_failures failed
// checkpoints in a row, 2 on a usage error or an invalid spec.
int RunTrainLocalCommand(const std::vector<std::string>& args);

// The same, writing what --model_dir keeps through `env` (a TestEnv that
// fails chosen writes, in tests).
int RunTrainLocalCommandWithEnv(const std::vector<std::string>& args, Env& env);

// The command's entry in `pstrain`'s table.
Subcommand TrainLocalCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_TRAIN_LOCAL_COMMAND_H_
