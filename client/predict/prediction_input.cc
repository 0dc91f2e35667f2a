#include "client/predict/prediction_input.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/data/criteo_reader.h"
#include "common/data/csv_reader.h"
#include "common/data/data_format.h"
#include "common/data/fashion_mnist.h"
#include "common/data/file_contents.h"
#include "common/data/libsvm_reader.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::StatusOr<PredictionInput> LoadIdx(const std::string& path,
                                        const PredictionInputOptions& options) {
  ASSIGN_OR_RETURN(ByteBuffer image_bytes, ReadFileContents(path));
  ASSIGN_OR_RETURN(IdxImages images, ParseIdxImages(std::move(image_bytes), path));
  InMemorySource::Examples examples;
  examples.num_examples = images.count;
  examples.dense_dim = images.rows * images.cols;
  examples.image_height = images.rows;
  examples.image_width = images.cols;
  examples.image_channels = 1;
  examples.dense_bytes = std::move(images.pixels);
  examples.byte_scale = 1.0f / 255.0f;  // as the Fashion-MNIST reader scales pixels
  PredictionInput input;
  if (!options.labels_path.empty()) {
    ASSIGN_OR_RETURN(const ByteBuffer label_bytes, ReadFileContents(options.labels_path));
    ASSIGN_OR_RETURN(const std::vector<uint8_t> labels,
                     ParseIdxLabels(label_bytes.view(), options.labels_path));
    if (static_cast<int64_t>(labels.size()) != examples.num_examples) {
      return absl::InvalidArgumentError(absl::StrCat(options.labels_path, ": ", labels.size(),
                                                     " labels for ", examples.num_examples,
                                                     " images in ", path));
    }
    examples.labels.assign(labels.begin(), labels.end());
    input.has_labels = true;
  } else {
    examples.labels.assign(examples.num_examples, 0.0f);  // placeholders, never reported
  }
  ASSIGN_OR_RETURN(input.source, InMemorySource::Create(std::move(examples)));
  return input;
}

// The number of fields of the first line holding data.
int64_t FirstLineFields(absl::string_view text, const PredictionInputOptions& options) {
  bool header = options.has_header;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripSuffix(line, "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    if (header) {
      header = false;
      continue;
    }
    return static_cast<int64_t>(
        std::vector<absl::string_view>(absl::StrSplit(line, options.delimiter)).size());
  }
  return 0;
}

// `text` with a first column of placeholder labels, named `label` in the
// header when there is one: the reader always expects a label.
std::string WithPlaceholderLabels(absl::string_view text, bool has_header, absl::string_view label,
                                  absl::string_view delimiter) {
  std::string labelled;
  bool header = has_header;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    absl::StrAppend(&labelled, header ? label : "0", delimiter, line, "\n");
    header = false;
  }
  return labelled;
}

// A CSV read with the columns of the training data (`trained`, which names
// them): by its header's names, with labels when it has the label's column.
absl::StatusOr<PredictionInput> LoadNamedCsvInput(const std::string& path, const CsvSource& trained,
                                                  const DatasetInfo& model_info) {
  ASSIGN_OR_RETURN(const ByteBuffer contents, ReadFileContents(path));
  std::string text(contents.view());
  CsvSource csv = trained;
  csv.clear_paths();
  csv.set_path(path);
  csv.set_has_header(true);
  if (csv.delimiter().empty()) csv.set_delimiter(",");
  // The features the model was trained on, by name: a column the input
  // lacks is named, rather than counted.
  if (!model_info.dense_names.empty()) {
    csv.clear_features();
    for (const std::string& name : model_info.dense_names) csv.add_features(name);
  }
  const absl::string_view first_line = absl::StripSuffix(
      absl::string_view(text).substr(0, absl::string_view(text).find('\n')), "\r");
  const std::vector<absl::string_view> names = absl::StrSplit(first_line, csv.delimiter());
  std::vector<absl::string_view> lacking;
  for (const std::string& feature : csv.features()) {
    if (std::find(names.begin(), names.end(), feature) == names.end()) lacking.push_back(feature);
  }
  if (!lacking.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1: the model reads the features ", absl::StrJoin(lacking, ", "),
                     " by name, which the header lacks; it holds ", absl::StrJoin(names, ", ")));
  }
  PredictionInput input;
  input.has_labels = std::find(names.begin(), names.end(), csv.label()) != names.end();
  if (!input.has_labels) {
    text = WithPlaceholderLabels(text, /*has_header=*/true, csv.label(), csv.delimiter());
  }
  ASSIGN_OR_RETURN(input.source, ParseCsv(text, csv, path));
  return input;
}

absl::StatusOr<PredictionInput> LoadCsvInput(const std::string& path,
                                             const PredictionInputOptions& options,
                                             const DatasetInfo& model_info) {
  if (options.trained_csv.has_value()) {
    return LoadNamedCsvInput(path, *options.trained_csv, model_info);
  }
  if (options.delimiter.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the CSV delimiter must be one character, got '", options.delimiter, "'"));
  }
  ASSIGN_OR_RETURN(const ByteBuffer contents, ReadFileContents(path));
  std::string text(contents.view());
  CsvSource csv;
  csv.set_path(path);
  csv.set_has_header(options.has_header);
  csv.set_delimiter(options.delimiter);
  csv.set_label_column(options.label_column);
  PredictionInput input;
  input.has_labels = FirstLineFields(text, options) != model_info.dense_dim;
  if (!input.has_labels) {
    text = WithPlaceholderLabels(text, options.has_header, "label", options.delimiter);
    csv.set_label_column(0);
  }
  ASSIGN_OR_RETURN(input.source, ParseCsv(text, csv, path));
  return input;
}

}  // namespace

absl::StatusOr<DataSpec::SourceCase> ResolveInputFormat(absl::string_view name,
                                                        absl::string_view path) {
  std::vector<absl::string_view> names;
  for (const DataFormat& format : DataFormats()) {
    if (format.predict_name.empty()) continue;
    if (name == format.predict_name) return format.source;
    names.push_back(format.predict_name);
  }
  if (!name.empty() && name != "auto") {
    return absl::InvalidArgumentError(absl::StrCat("unknown input format '", name, "': use ",
                                                   JoinNames(names, "or")));
  }
  absl::string_view file =
      path.substr(path.rfind('/') == absl::string_view::npos ? 0 : path.rfind('/') + 1);
  file = absl::StripSuffix(file, ".gz");
  for (const DataFormat& format : DataFormats()) {
    if (!format.predict_name.empty() && format.named_like != nullptr && format.named_like(file)) {
      return format.source;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot tell the format of ", path,
                                                 " from its name: give --input_format=",
                                                 absl::StrJoin(names, "|")));
}

absl::StatusOr<PredictionInput> LoadPredictionInput(const std::string& path,
                                                    const PredictionInputOptions& options,
                                                    const DatasetInfo& model_info) {
  PredictionInput input;
  switch (options.format) {
    case DataSpec::kFashionMnist: {
      ASSIGN_OR_RETURN(input, LoadIdx(path, options));
      break;
    }
    case DataSpec::kCsv: {
      ASSIGN_OR_RETURN(input, LoadCsvInput(path, options, model_info));
      break;
    }
    case DataSpec::kLibsvm: {
      LibsvmSource libsvm;
      libsvm.set_path(path);
      libsvm.set_zero_based(options.zero_based);
      // Ids the model has no row for are refused, naming the line.
      libsvm.set_num_features(model_info.sparse_dim);
      ASSIGN_OR_RETURN(input.source, LoadLibsvm(libsvm));
      input.has_labels = true;  // every libsvm line starts with one
      break;
    }
    case DataSpec::kCriteo: {
      CriteoSource criteo;
      criteo.add_paths(path);
      // Hashed as in training: the model's ids are its hash buckets.
      criteo.set_hash_buckets(model_info.sparse_dim);
      if (model_info.sparse_dim <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": Criteo examples are sparse ids; the model reads none"));
      }
      ASSIGN_OR_RETURN(input.source, LoadCriteo(criteo));
      input.has_labels = true;  // every Criteo line starts with one
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": pstrain predict does not read this format"));
  }
  const DatasetInfo& info = input.source->info();
  if (info.dense_dim != model_info.dense_dim) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": examples have ", info.dense_dim,
                                                   " dense features; the model reads ",
                                                   model_info.dense_dim));
  }
  if (model_info.sparse_dim == 0 && info.sparse_dim > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": examples have sparse features; the model reads none"));
  }
  return input;
}

}  // namespace pstrain
