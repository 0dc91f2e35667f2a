#include "client/predict/predict_command.h"

#include <iostream>

#include "client/predict/batch_prediction.h"
#include "client/predict/prediction_input.h"
#include "common/config/job_spec_defaults.h"
#include "common/export/exported_model.h"
#include "gflags/gflags.h"

DEFINE_string(labels, "", "predict: the IDX labels file of an IDX input");
DEFINE_string(input_format, "",
              "predict: idx, csv, libsvm or criteo (default: from the input's name; a Criteo "
              "file's name does not tell, so say criteo)");
DEFINE_int32(csv_label_column, 0, "predict: the label column of a CSV input (0-based)");
DEFINE_bool(csv_has_header, false, "predict: the first line of a CSV input is a header");
DEFINE_string(csv_delimiter, ",", "predict: the delimiter of a CSV input (one character)");
DEFINE_bool(libsvm_zero_based, false, "predict: libsvm indices start at 0 instead of 1");
DEFINE_bool(print_predictions, false,
            "predict: print one line per example also when the input has labels");
DEFINE_int64(predict_batch_size, 256, "predict: examples per batch");

namespace pstrain {

int RunPredictCommand(const std::vector<std::string>& args) {
  if (args.size() != 2) {
    std::cerr << "pstrain predict: expected two arguments, the export folder and the input file; "
                 "got "
              << args.size() << " (see pstrain predict --help)\n";
    return 2;
  }
  if (FLAGS_predict_batch_size <= 0) {
    std::cerr << "pstrain predict: --predict_batch_size must be > 0, got "
              << FLAGS_predict_batch_size << "\n";
    return 2;
  }
  const std::string& export_dir = args[0];
  const std::string& input_path = args[1];
  absl::StatusOr<DataSpec::SourceCase> format = ResolveInputFormat(FLAGS_input_format, input_path);
  if (!format.ok()) {
    std::cerr << "pstrain predict: " << format.status().message() << "\n";
    return 2;
  }
  if (!FLAGS_labels.empty() && *format != DataSpec::kFashionMnist) {
    std::cerr << "pstrain predict: --labels is for IDX input; CSV and libsvm lines carry their "
                 "labels\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<ExportedModel>> model = LoadExportedModel(export_dir);
  if (!model.ok()) {
    std::cerr << "pstrain predict: " << model.status().message() << "\n";
    return absl::IsNotFound(model.status()) ? 2 : 1;
  }
  PredictionInputOptions options;
  options.format = *format;
  options.labels_path = FLAGS_labels;
  options.label_column = FLAGS_csv_label_column;
  options.has_header = FLAGS_csv_has_header;
  options.delimiter = FLAGS_csv_delimiter;
  options.zero_based = FLAGS_libsvm_zero_based;
  const DataSpec& trained = (*model)->spec().train_data();
  if (trained.has_csv() && NamesCsvColumns(trained.csv())) options.trained_csv = trained.csv();
  absl::StatusOr<PredictionInput> input =
      LoadPredictionInput(input_path, options, (*model)->dataset());
  if (!input.ok()) {
    std::cerr << "pstrain predict: " << input.status().message() << "\n";
    return absl::IsInvalidArgument(input.status()) || absl::IsNotFound(input.status()) ? 2 : 1;
  }
  const bool print_each = !input->has_labels || FLAGS_print_predictions;
  if (print_each) {
    std::cout << FormatPredictionHeader((*model)->prediction_kind(), input->has_labels) << "\n";
  }
  absl::StatusOr<PredictionSummary> summary =
      PredictAll(**model, *input->source, input->has_labels, FLAGS_predict_batch_size,
                 [&](const ExamplePrediction& prediction) {
                   if (print_each) std::cout << FormatPrediction(prediction) << "\n";
                 });
  if (!summary.ok()) {
    std::cerr << "pstrain predict: " << input_path << ": " << summary.status().message() << "\n";
    return absl::IsInvalidArgument(summary.status()) ? 2 : 1;
  }
  std::cout << "model " << (*model)->path() << " (step " << (*model)->global_step() << ") on "
            << input_path << ": " << FormatSummary(*summary) << "\n";
  return 0;
}

Subcommand PredictCommand() {
  return {"predict",
          "EXPORT_DIR INPUT",
          "run an exported model on IDX, CSV, libsvm or Criteo input; accuracy when labelled",
          "Loads an exported model (an export folder, or a folder of versions such as\n"
          "MODEL_DIR/export/best, whose newest is used) and runs it on INPUT:\n"
          "  idx      IDX images (idx3-ubyte, gzipped or not, Fashion-MNIST style);\n"
          "           --labels=FILE gives the idx1-ubyte labels\n"
          "  csv      one example per line; the label in --csv_label_column, unless\n"
          "           the lines hold exactly the model's features. When the job's\n"
          "           training CSV named its columns (label, features, categorical),\n"
          "           INPUT is read by the same names from its header, with the\n"
          "           same fills, and has labels when the header has the label's\n"
          "           name; the --csv_* flags are then unused\n"
          "  libsvm   \"label index:value ...\" per line\n"
          "  criteo   Criteo display-ads TSV (label, 13 integers, 26 hex categories),\n"
          "           hashed into the model's buckets as in training\n"
          "The format is guessed from INPUT's name unless --input_format says it\n"
          "(always for criteo).\n"
          "\n"
          "Without labels it prints one line per example (index, class, probability;\n"
          "or index, value for a regression), then a summary. With labels it prints\n"
          "the accuracy and loss (mse for a regression); --print_predictions adds the\n"
          "per-example lines, with the label.\n"
          "\n"
          "Exit codes: 0 done; 1 the export is damaged or cannot be loaded; 2 bad\n"
          "usage or bad input (a missing or malformed file, examples the model cannot\n"
          "read; the message names the file).\n"
          "\n"
          "Example:\n"
          "  pstrain predict ~/pstrain/fashion_mnist_mlp/export/best \\\n"
          "      /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz \\\n"
          "      --labels=/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz",
          {"labels", "input_format", "csv_label_column", "csv_has_header", "csv_delimiter",
           "libsvm_zero_based", "print_predictions", "predict_batch_size"},
          RunPredictCommand};
}

}  // namespace pstrain
