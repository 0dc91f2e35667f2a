#ifndef PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_
#define PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_

#include <string>
#include <vector>

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain predict` for the command table: its usage, help and flags.
Subcommand PredictCommand();

// `pstrain predict EXPORT_DIR INPUT`: LoadExportedModel, LoadPredictionInput
// (client/predict/prediction_input.h), PredictAll
// (client/predict/batch_prediction.h); prints to stdout. `args` are the
// positional arguments after the command name. Returns the exit code
// its help describes.
int RunPredictCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_
