#include "client/predict/predict_command.h"

#include <iostream>

#include "client/predict/batch_prediction.h"
#include "client/predict/prediction_input.h"
#include "common/export/exported_model.h"
#include "gflags/gflags.h"

DEFINE_string(labels, "", "predict: the IDX labels file of an IDX input");
DEFINE_string(input_format, "", "predict: idx, csv or libsvm (default: from the input's name)");
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
              << args.size() << "\n\n"
              << kPredictUsage;
    return 2;
  }
  if (FLAGS_predict_batch_size <= 0) {
    std::cerr << "pstrain predict: --predict_batch_size must be > 0, got "
              << FLAGS_predict_batch_size << "\n";
    return 2;
  }
  const std::string& export_dir = args[0];
  const std::string& input_path = args[1];
  absl::StatusOr<InputFormat> format = ResolveInputFormat(FLAGS_input_format, input_path);
  if (!format.ok()) {
    std::cerr << "pstrain predict: " << format.status().message() << "\n";
    return 2;
  }
  if (!FLAGS_labels.empty() && *format != InputFormat::kIdx) {
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

}  // namespace pstrain
