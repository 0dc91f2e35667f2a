#ifndef PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_
#define PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_

#include <string>
#include <vector>

namespace pstrain {

// The help text of `pstrain predict`, for the command dispatcher.
inline constexpr char kPredictUsage[] =
    R"(pstrain predict EXPORT_DIR INPUT [--labels=FILE] [--input_format=idx|csv|libsvm]

Loads an exported model (an export folder, or a folder of versions such as
MODEL_DIR/export/best, whose newest is used) and runs it on INPUT:
  idx      IDX images (idx3-ubyte, gzipped or not, Fashion-MNIST style);
           --labels=FILE gives the idx1-ubyte labels
  csv      one example per line; the label in --csv_label_column, unless
           the lines hold exactly the model's features
  libsvm   "label index:value ..." per line
The format is guessed from INPUT's name unless --input_format says it.

Without labels it prints one line per example (index, class, probability;
or index, value for a regression), then a summary. With labels it prints
the accuracy and loss (mse for a regression); --print_predictions adds the
per-example lines, with the label.

Flags:
  --labels=FILE              IDX labels of INPUT
  --input_format=FORMAT      idx, csv or libsvm (default: from the name)
  --csv_label_column=N       default 0
  --csv_has_header           the first CSV line is a header
  --csv_delimiter=C          default ","
  --libsvm_zero_based        libsvm indices start at 0
  --print_predictions        also print per-example lines when there are labels
  --predict_batch_size=N     examples per batch (default 256)

Exit codes: 0 done; 1 the export is damaged or cannot be loaded; 2 bad
usage or bad input (a missing or malformed file, examples the model cannot
read; the message names the file).

Example:
  pstrain predict /tmp/pstrain/fashion_mnist_mlp/export/best \
      /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz \
      --labels=/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
)";

// `pstrain predict EXPORT_DIR INPUT`: LoadExportedModel, LoadPredictionInput
// (client/predict/prediction_input.h), PredictAll
// (client/predict/batch_prediction.h); prints to stdout. `args` are the
// positional arguments after the command name. Returns the exit code
// kPredictUsage describes.
int RunPredictCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_PREDICT_PREDICT_COMMAND_H_
