#ifndef PSTRAIN_CLIENT_PREDICT_PREDICTION_INPUT_H_
#define PSTRAIN_CLIENT_PREDICT_PREDICTION_INPUT_H_

// The examples `pstrain predict` runs an exported model on, read with the
// data readers of common/data: IDX images (Fashion-MNIST style, gzipped or
// not) with an optional IDX labels file, CSV, libsvm, or Criteo TSV.

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/dataset_info.h"
#include "common/data/in_memory_source.h"
#include "protos/job.pb.h"

namespace pstrain {

// The data source whose files `path` holds: by the format's name for
// predict ("idx", "csv", "libsvm" or "criteo", DataFormat::predict_name),
// or, for "" or "auto", guessed from the file name as the formats declare
// it (DataFormat::named_like: *-ubyte, *.idx*: IDX; *.csv: CSV; *.svm,
// *.libsvm, *.svmlight: libsvm; each also gzipped). Criteo's files have no
// telling name: name the format.
// InvalidArgument: another name, or a file name that says nothing.
absl::StatusOr<DataSpec::SourceCase> ResolveInputFormat(absl::string_view name,
                                                        absl::string_view path);

struct PredictionInputOptions {
  // A source whose DataFormat has a predict_name.
  DataSpec::SourceCase format = DataSpec::kFashionMnist;
  // IDX: the idx1-ubyte labels file; empty: no labels.
  std::string labels_path;
  // CSV: the label column (0-based), whether the first line is a header,
  // and the delimiter (one character). A CSV whose lines hold exactly the
  // model's number of dense features has no label column.
  int label_column = 0;
  bool has_header = false;
  std::string delimiter = ",";
  // CSV: the training data's options when they name its columns (by the
  // header): the input is read by the same names, categories and fills,
  // and has labels when its header has the label's name. The three
  // options above are then unused.
  std::optional<CsvSource> trained_csv;
  // libsvm: indices start at 0 instead of 1.
  bool zero_based = false;
};

struct PredictionInput {
  std::unique_ptr<InMemorySource> source;
  bool has_labels = false;
};

// Reads `path` for a model sized as `model_info` says (its dense width or
// sparse id range, from the export).
// NotFound: no such file. InvalidArgument, naming the file: a malformed
// file, image and label counts that differ, examples of another width than
// the model reads, sparse ids beyond the model's.
absl::StatusOr<PredictionInput> LoadPredictionInput(const std::string& path,
                                                    const PredictionInputOptions& options,
                                                    const DatasetInfo& model_info);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_PREDICT_PREDICTION_INPUT_H_
