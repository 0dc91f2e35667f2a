#include "common/config/job_spec_validation.h"

#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/config/job_mode.h"
#include "common/config/metric_names.h"
#include "common/data/data_format.h"
#include "common/model/model_kind.h"
#include "google/protobuf/repeated_field.h"

namespace pstrain {
namespace {

constexpr size_t kMaxNameLength = 64;

std::string Quote(absl::string_view text) { return absl::StrCat("\"", absl::CEscape(text), "\""); }

// "UPDATE_MODE_SYNC" -> "SYNC": the prefix repeats the field's name.
std::string ShortEnumName(const std::string& full_name, absl::string_view prefix, int value) {
  if (full_name.empty()) return absl::StrCat(value);  // a value this build does not know
  absl::string_view name = full_name;
  absl::ConsumePrefix(&name, prefix);
  return std::string(name);
}

std::string ModeName(JobMode mode) { return ShortEnumName(JobMode_Name(mode), "JOB_MODE_", mode); }

std::string UpdateModeName(UpdateMode mode) {
  return ShortEnumName(UpdateMode_Name(mode), "UPDATE_MODE_", mode);
}

template <typename T>
bool IsFinite(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isfinite(value);
  } else {
    return true;
  }
}

// Every problem found in a spec, in the order the fields are checked.
// Whether a field must be set.
enum class Presence {
  kRequired,
  kOptional,
};

class Problems {
 public:
  void Add(std::string problem) { problems_.push_back(std::move(problem)); }

  // Adds "<path> must be <rule>, got <value>" unless `ok`.
  template <typename T>
  void Require(bool ok, absl::string_view path, absl::string_view rule, T value) {
    if (!ok) Add(absl::StrCat(path, " must be ", rule, ", got ", value));
  }

  // The comparisons are written so that NaN fails them.
  template <typename T>
  void Positive(absl::string_view path, T value) {
    Require(IsFinite(value) && value > 0, path, "> 0", value);
  }
  template <typename T>
  void NonNegative(absl::string_view path, T value) {
    Require(IsFinite(value) && value >= 0, path, ">= 0", value);
  }
  // [0, 1)
  void Fraction(absl::string_view path, double value) {
    Require(value >= 0 && value < 1, path, "in [0, 1)", value);
  }
  // (0, 1]
  void DecayFactor(absl::string_view path, double value) {
    Require(value > 0 && value <= 1, path, "in (0, 1]", value);
  }

  void KnownEnum(absl::string_view path, int value, bool (*is_valid)(int)) {
    if (!is_valid(value)) Add(absl::StrCat(path, " has an unknown value ", value));
  }

  // A filesystem path. Output paths may not climb out of where they point
  // with "..": servers confine what they write under configured roots, and a
  // ".." makes the final location depend on symlinks and the server's cwd.
  void Path(absl::string_view field, absl::string_view value, Presence presence) {
    if (value.empty()) {
      if (presence == Presence::kRequired) Add(absl::StrCat(field, " is required"));
      return;
    }
    if (absl::StrContains(value, '\0')) {
      Add(absl::StrCat(field, " must not contain a NUL byte, got ", Quote(value)));
    }
  }
  void OutputPath(absl::string_view field, absl::string_view value, Presence presence) {
    Path(field, value, presence);
    for (absl::string_view part : absl::StrSplit(value, '/')) {
      if (part == "..") {
        Add(absl::StrCat(field, " must not contain \"..\", got ", Quote(value)));
        return;
      }
    }
  }

  absl::Status ToStatus() const {
    if (problems_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrJoin(problems_, "; "));
  }

 private:
  std::vector<std::string> problems_;
};

void CheckName(const std::string& name, Problems* problems) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') ok = false;
  }
  if (!ok) {
    problems->Add(
        absl::StrCat("name ", Quote(name), " must be 1 to 64 letters, digits, '-', '_' or '.'"));
  }
}

void CheckNumClasses(absl::string_view path, int32_t num_classes, Problems* problems) {
  problems->Require(num_classes == 0 || num_classes >= 2, path, "0 (from the data) or >= 2",
                    num_classes);
}

void CheckHiddenUnits(absl::string_view path,
                      const google::protobuf::RepeatedField<int64_t>& hidden_units,
                      Problems* problems) {
  for (int i = 0; i < hidden_units.size(); ++i) {
    problems->Positive(absl::StrCat(path, "[", i, "]"), hidden_units[i]);
  }
}

void CheckEmbedding(absl::string_view path, const EmbeddingSpec& embedding, Problems* problems) {
  problems->NonNegative(absl::StrCat(path, ".vocabulary_size"), embedding.vocabulary_size());
  problems->Positive(absl::StrCat(path, ".dim"), embedding.dim());
  problems->KnownEnum(absl::StrCat(path, ".combiner"), embedding.combiner(), Combiner_IsValid);
  problems->Require(embedding.admit_after() >= 1, absl::StrCat(path, ".admit_after"), ">= 1",
                    embedding.admit_after());
  problems->NonNegative(absl::StrCat(path, ".max_bytes_per_shard"),
                        embedding.max_bytes_per_shard());
  // A fixed table has every row from the start: nothing to admit or evict.
  if (embedding.vocabulary_size() > 0) {
    if (embedding.admit_after() > 1) {
      problems->Add(absl::StrCat(path, ".admit_after is only valid for a dynamic table ",
                                 "(vocabulary_size 0), got vocabulary_size ",
                                 embedding.vocabulary_size()));
    }
    if (embedding.max_bytes_per_shard() > 0) {
      problems->Add(absl::StrCat(path, ".max_bytes_per_shard is only valid for a dynamic table ",
                                 "(vocabulary_size 0), got vocabulary_size ",
                                 embedding.vocabulary_size()));
    }
  }
}

void CheckDlrm(const DlrmSpec& dlrm, Problems* problems) {
  const EmbeddingSpec& embedding = dlrm.embedding();
  CheckEmbedding("model.dlrm.embedding", embedding, problems);
  // One id per table: there is nothing to combine.
  if (embedding.combiner() == COMBINER_MEAN) {
    problems->Add(
        "model.dlrm.embedding.combiner must be unset or COMBINER_SUM: each field's table reads "
        "one id per example, got COMBINER_MEAN");
  }
  CheckHiddenUnits("model.dlrm.bottom_mlp", dlrm.bottom_mlp(), problems);
  CheckHiddenUnits("model.dlrm.top_mlp", dlrm.top_mlp(), problems);
  if (dlrm.bottom_mlp().empty()) {
    problems->Add(
        "model.dlrm.bottom_mlp needs a layer: its last width is model.dlrm.embedding.dim");
  } else if (*dlrm.bottom_mlp().rbegin() != embedding.dim()) {
    problems->Add(absl::StrCat(
        "model.dlrm.bottom_mlp's last width must be model.dlrm.embedding.dim (", embedding.dim(),
        "), the width of the vectors it interacts with, got ", *dlrm.bottom_mlp().rbegin()));
  }
  if (dlrm.top_mlp().empty()) {
    problems->Add("model.dlrm.top_mlp needs a layer: its last width is 1, the logit");
  } else if (*dlrm.top_mlp().rbegin() != 1) {
    problems->Add(absl::StrCat("model.dlrm.top_mlp's last width must be 1, the logit, got ",
                               *dlrm.top_mlp().rbegin()));
  }
  problems->NonNegative("model.dlrm.num_fields", dlrm.num_fields());
  problems->NonNegative("model.dlrm.dense_dim", dlrm.dense_dim());
}

// What of an imported graph's spec can be checked without its file: the
// graph's own tables and inputs OnnxModel::Create checks.
void CheckOnnx(const OnnxModelSpec& onnx, Problems* problems) {
  problems->Path("model.onnx.path", onnx.path(), Presence::kRequired);
  problems->KnownEnum("model.onnx.loss", onnx.loss(), OnnxLoss_IsValid);
  for (int i = 0; i < onnx.dynamic_tables_size(); ++i) {
    const OnnxDynamicTable& table = onnx.dynamic_tables(i);
    const std::string path = absl::StrCat("model.onnx.dynamic_tables[", i, "]");
    if (table.initializer().empty()) {
      problems->Add(absl::StrCat(path, ".initializer is required: the table's initializer"));
    }
    problems->NonNegative(absl::StrCat(path, ".admit_after"), table.admit_after());
    problems->NonNegative(absl::StrCat(path, ".max_bytes_per_shard"), table.max_bytes_per_shard());
  }
  for (int i = 0; i < onnx.inputs_size(); ++i) {
    const OnnxInput& input = onnx.inputs(i);
    const std::string path = absl::StrCat("model.onnx.inputs[", i, "]");
    if (input.name().empty()) {
      problems->Add(absl::StrCat(path, ".name is required: the graph input it binds"));
    }
    if (input.part_case() == OnnxInput::PART_NOT_SET) {
      problems->Add(absl::StrCat(path,
                                 " needs the part of the batch its input takes: one of "
                                 "dense, ids, id_weights, id_counts"));
    }
    if (input.has_ids() && input.ids().has_field()) {
      problems->NonNegative(absl::StrCat(path, ".ids.field"), input.ids().field());
    }
  }
}

void CheckModel(const ModelSpec& model, Problems* problems) {
  switch (model.kind_case()) {
    case ModelSpec::kLinearRegression:
      problems->NonNegative("model.linear_regression.input_dim",
                            model.linear_regression().input_dim());
      break;
    case ModelSpec::kLogisticRegression:
      problems->NonNegative("model.logistic_regression.input_dim",
                            model.logistic_regression().input_dim());
      CheckNumClasses("model.logistic_regression.num_classes",
                      model.logistic_regression().num_classes(), problems);
      break;
    case ModelSpec::kMlp: {
      const MlpSpec& mlp = model.mlp();
      problems->NonNegative("model.mlp.input_dim", mlp.input_dim());
      if (mlp.regression()) {
        problems->Require(mlp.num_classes() == 0, "model.mlp.num_classes",
                          "0 for a regression (one output)", mlp.num_classes());
      } else {
        CheckNumClasses("model.mlp.num_classes", mlp.num_classes(), problems);
      }
      CheckHiddenUnits("model.mlp.hidden_units", mlp.hidden_units(), problems);
      problems->KnownEnum("model.mlp.activation", mlp.activation(), Activation_IsValid);
      problems->Fraction("model.mlp.dropout", mlp.dropout());
      break;
    }
    case ModelSpec::kCnn: {
      const CnnSpec& cnn = model.cnn();
      CheckNumClasses("model.cnn.num_classes", cnn.num_classes(), problems);
      problems->Positive("model.cnn.conv1_filters", cnn.conv1_filters());
      problems->Positive("model.cnn.conv2_filters", cnn.conv2_filters());
      // Odd, so that "same" padding centres the kernel.
      problems->Require(cnn.kernel_size() >= 1 && cnn.kernel_size() % 2 == 1,
                        "model.cnn.kernel_size", "odd and >= 1", cnn.kernel_size());
      problems->Positive("model.cnn.dense_units", cnn.dense_units());
      problems->Fraction("model.cnn.dropout", cnn.dropout());
      break;
    }
    case ModelSpec::kWideAndDeep: {
      const WideAndDeepSpec& wide_and_deep = model.wide_and_deep();
      CheckEmbedding("model.wide_and_deep.embedding", wide_and_deep.embedding(), problems);
      CheckHiddenUnits("model.wide_and_deep.hidden_units", wide_and_deep.hidden_units(), problems);
      problems->KnownEnum("model.wide_and_deep.activation", wide_and_deep.activation(),
                          Activation_IsValid);
      problems->NonNegative("model.wide_and_deep.num_fields", wide_and_deep.num_fields());
      problems->NonNegative("model.wide_and_deep.dense_dim", wide_and_deep.dense_dim());
      break;
    }
    case ModelSpec::kDlrm:
      CheckDlrm(model.dlrm(), problems);
      break;
    case ModelSpec::kPlugin:
      problems->Path("model.plugin.library_path", model.plugin().library_path(),
                     Presence::kRequired);
      break;
    case ModelSpec::kOnnx:
      CheckOnnx(model.onnx(), problems);
      break;
    case ModelSpec::KIND_NOT_SET: {
      std::vector<absl::string_view> kinds;
      for (const ModelKind& kind : ModelKinds()) kinds.push_back(kind.name);
      problems->Add(absl::StrCat("model is required: set one of ", absl::StrJoin(kinds, ", ")));
      break;
    }
  }
}

// The data a model kind can read, as the two tables declare: images for a
// kind that needs them, sparse ids likewise. (What an ONNX graph reads,
// features or ids, its file says: OnnxModel::Create checks.)
void CheckModelReadsData(const ModelSpec& model, absl::string_view data_path, const DataSpec& data,
                         Problems* problems) {
  const ModelKind* kind = ModelKindOf(model.kind_case());
  const DataFormat* format = DataFormatOf(data.source_case());
  if (kind == nullptr || format == nullptr) return;  // reported elsewhere
  if (kind->needs_images && !format->images) {
    const std::vector<absl::string_view> sources =
        DataFormatNames([](const DataFormat& f) { return f.images; });
    problems->Add(absl::StrCat("model.", kind->name, " needs images: ", data_path, " must be ",
                               JoinNames(sources, "or"), ", got ", format->name));
  }
  if (kind->needs_ids && !format->carries_ids(data)) {
    std::vector<absl::string_view> sources;
    for (const DataFormat& f : DataFormats()) {
      if (f.ids_condition.empty() && f.carries_ids(DataSpec())) sources.push_back(f.name);
    }
    for (const DataFormat& f : DataFormats()) {
      if (!f.ids_condition.empty()) sources.push_back(f.ids_condition);
    }
    problems->Add(absl::StrCat("model.", kind->name, " needs sparse ids: ", data_path, " must be ",
                               JoinNames(sources, "or"), ", got ", format->name));
  }
}

// A source's `paths` (files or glob patterns): at least one, each a path.
void CheckFilePatterns(absl::string_view prefix,
                       const google::protobuf::RepeatedPtrField<std::string>& paths,
                       Problems* problems) {
  if (paths.empty()) problems->Add(absl::StrCat(prefix, "paths needs a file"));
  for (int i = 0; i < paths.size(); ++i) {
    problems->Path(absl::StrCat(prefix, "paths[", i, "]"), paths.Get(i), Presence::kRequired);
  }
}

// A source's `path` and further `paths` (CSV, libsvm): a file between them.
void CheckPathAndPatterns(absl::string_view prefix, const std::string& path,
                          const google::protobuf::RepeatedPtrField<std::string>& paths,
                          Problems* problems) {
  if (path.empty() && paths.empty()) {
    problems->Add(absl::StrCat(prefix, "path is required (or ", prefix, "paths)"));
  }
  problems->Path(absl::StrCat(prefix, "path"), path, Presence::kOptional);
  for (int i = 0; i < paths.size(); ++i) {
    problems->Path(absl::StrCat(prefix, "paths[", i, "]"), paths.Get(i), Presence::kRequired);
  }
}

void CheckCsv(const std::string& prefix, const CsvSource& csv, Problems* problems) {
  CheckPathAndPatterns(prefix, csv.path(), csv.paths(), problems);
  problems->NonNegative(absl::StrCat(prefix, "label_column"), csv.label_column());
  if (csv.delimiter().size() != 1) {
    problems->Add(
        absl::StrCat(prefix, "delimiter must be one character, got ", Quote(csv.delimiter())));
  } else if (csv.delimiter() == "\n" || csv.delimiter() == "\r" || csv.delimiter() == "\"") {
    problems->Add(absl::StrCat(prefix, "delimiter must not be a line end or a quote, got ",
                               Quote(csv.delimiter())));
  }
  problems->Positive(absl::StrCat(prefix, "hash_buckets"), csv.hash_buckets());
  // A column has one role: the label, a feature, categorical or ignored.
  std::map<std::string, std::string> roles;
  const auto claim = [&](const std::string& name, const std::string& role) {
    if (name.empty()) {
      problems->Add(absl::StrCat(prefix, role, " names an empty column"));
      return;
    }
    auto [it, added] = roles.emplace(name, role);
    if (!added && it->second == role) {
      problems->Add(absl::StrCat(prefix, role, " names column ", Quote(name), " twice"));
    } else if (!added) {
      problems->Add(absl::StrCat(prefix, "column ", Quote(name), " is named both in ", it->second,
                                 " and in ", role));
    }
  };
  if (!csv.label().empty()) claim(csv.label(), "label");
  for (const std::string& name : csv.features()) claim(name, "features");
  for (const std::string& name : csv.categorical()) claim(name, "categorical");
  for (const std::string& name : csv.ignore()) claim(name, "ignore");
  for (int i = 0; i < csv.fill_missing_size(); ++i) {
    const std::string& column = csv.fill_missing(i).column();
    const auto role = roles.find(column);
    if (column.empty()) {
      problems->Add(absl::StrCat(prefix, "fill_missing[", i,
                                 "].column is required (a feature "
                                 "column's name, or \"*\")"));
    } else if (role != roles.end() && role->second != "features") {
      problems->Add(absl::StrCat(
          prefix, "fill_missing[", i, "] names ", Quote(column),
          role->second == "label" ? ", the label" : absl::StrCat(", named in ", role->second),
          ", not a feature column"));
    } else if (!std::isfinite(csv.fill_missing(i).value())) {
      problems->Add(absl::StrCat(prefix, "fill_missing[", i, "].value must be a finite number"));
    }
  }
}

void CheckSyntheticClicks(const std::string& prefix, const SyntheticClicksSource& clicks,
                          Problems* problems) {
  problems->Positive(absl::StrCat(prefix, "num_examples"), clicks.num_examples());
  problems->Positive(absl::StrCat(prefix, "num_fields"), clicks.num_fields());
  problems->Positive(absl::StrCat(prefix, "vocabulary_per_field"), clicks.vocabulary_per_field());
  // A Zipf distribution over unbounded ranks needs an exponent above 1.
  problems->Require(std::isfinite(clicks.zipf_exponent()) && clicks.zipf_exponent() > 1,
                    absl::StrCat(prefix, "zipf_exponent"), "> 1", clicks.zipf_exponent());
  problems->Require(clicks.dense_features() >= 0 && clicks.dense_features() <= 100000,
                    absl::StrCat(prefix, "dense_features"), "in [0, 100000]",
                    clicks.dense_features());
}

// `path`: "train_data.tfrecord", without the trailing dot of `prefix`.
void CheckTfRecord(absl::string_view path, const TfRecordSource& tfrecord, Problems* problems) {
  const std::string prefix = absl::StrCat(path, ".");
  CheckFilePatterns(prefix, tfrecord.paths(), problems);
  problems->KnownEnum(absl::StrCat(prefix, "compression"), tfrecord.compression(),
                      TfRecordSource::Compression_IsValid);
  if (tfrecord.dense_features().empty() && tfrecord.sparse_features().empty()) {
    problems->Add(absl::StrCat(prefix, "dense_features and ", prefix,
                               "sparse_features are both empty: name the features to read"));
  }
  problems->Positive(absl::StrCat(prefix, "hash_buckets"), tfrecord.hash_buckets());
  if (tfrecord.label().empty()) {
    problems->Add(absl::StrCat(prefix, "label is required: the feature holding the label"));
  }
  absl::flat_hash_set<std::string> named;
  for (const auto* names : {&tfrecord.dense_features(), &tfrecord.sparse_features()}) {
    for (const std::string& name : *names) {
      if (name == tfrecord.label()) {
        problems->Add(
            absl::StrCat(path, " reads feature ", Quote(name), " as the label and as an input"));
      } else if (!named.insert(name).second) {
        problems->Add(absl::StrCat(path, " names feature ", Quote(name), " twice"));
      }
    }
  }
}

// The fields of the source `data` names.
void CheckSource(absl::string_view path, const DataSpec& data, Problems* problems) {
  switch (data.source_case()) {
    case DataSpec::kFashionMnist:
      problems->Path(absl::StrCat(path, ".fashion_mnist.dir"), data.fashion_mnist().dir(),
                     Presence::kRequired);
      problems->KnownEnum(absl::StrCat(path, ".fashion_mnist.split"), data.fashion_mnist().split(),
                          DataSplit_IsValid);
      break;
    case DataSpec::kCsv:
      CheckCsv(absl::StrCat(path, ".csv."), data.csv(), problems);
      break;
    case DataSpec::kLibsvm:
      CheckPathAndPatterns(absl::StrCat(path, ".libsvm."), data.libsvm().path(),
                           data.libsvm().paths(), problems);
      problems->NonNegative(absl::StrCat(path, ".libsvm.num_features"),
                            data.libsvm().num_features());
      break;
    case DataSpec::kSyntheticClicks:
      CheckSyntheticClicks(absl::StrCat(path, ".synthetic_clicks."), data.synthetic_clicks(),
                           problems);
      break;
    case DataSpec::kTfrecord:
      CheckTfRecord(absl::StrCat(path, ".tfrecord"), data.tfrecord(), problems);
      break;
    case DataSpec::kCriteo: {
      const std::string prefix = absl::StrCat(path, ".criteo.");
      CheckFilePatterns(prefix, data.criteo().paths(), problems);
      problems->Positive(absl::StrCat(prefix, "hash_buckets"), data.criteo().hash_buckets());
      break;
    }
    case DataSpec::SOURCE_NOT_SET: {
      std::vector<absl::string_view> sources;
      for (const DataFormat& format : DataFormats()) sources.push_back(format.name);
      problems->Add(
          absl::StrCat(path, " needs a source: set one of ", absl::StrJoin(sources, ", ")));
      break;
    }
  }
}

void CheckData(absl::string_view path, const DataSpec& data, Problems* problems) {
  CheckSource(path, data, problems);
  problems->Positive(absl::StrCat(path, ".batch_size"), data.batch_size());
  problems->NonNegative(absl::StrCat(path, ".epochs"), data.epochs());
  problems->NonNegative(absl::StrCat(path, ".prefetch_batches"), data.prefetch_batches());
  problems->KnownEnum(absl::StrCat(path, ".read_mode"), data.read_mode(),
                      DataSpec::ReadMode_IsValid);
  const DataFormat* format = DataFormatOf(data.source_case());
  if (data.read_mode() == DataSpec::READ_MODE_STREAMED && format != nullptr && !format->streams) {
    const std::vector<absl::string_view> streamed =
        DataFormatNames([](const DataFormat& f) { return f.streams; });
    const std::vector<absl::string_view> in_memory =
        DataFormatNames([](const DataFormat& f) { return !f.streams; });
    problems->Add(absl::StrCat(path, ".read_mode: streamed reading is for files (",
                               absl::StrJoin(streamed, ", "), "); ", JoinNames(in_memory, "and"),
                               " are held in memory"));
  }
  if (data.read_mode() == DataSpec::READ_MODE_STREAMED && data.csv().standardize()) {
    problems->Add(absl::StrCat(path,
                               ".csv.standardize needs the data in memory (its statistics "
                               "take a pass over all of it), but read_mode is READ_MODE_STREAMED"));
  }
  // 0 reads as unset: the default.
  problems->NonNegative(absl::StrCat(path, ".stream_block_records"), data.stream_block_records());
  problems->NonNegative(absl::StrCat(path, ".shuffle_window_blocks"), data.shuffle_window_blocks());
}

void CheckOptimizer(const OptimizerSpec& optimizer, Problems* problems) {
  switch (optimizer.kind_case()) {
    case OptimizerSpec::kMomentum:
      problems->Fraction("optimizer.momentum.momentum", optimizer.momentum().momentum());
      break;
    case OptimizerSpec::kAdagrad:
      problems->Positive("optimizer.adagrad.initial_accumulator",
                         optimizer.adagrad().initial_accumulator());
      problems->NonNegative("optimizer.adagrad.epsilon", optimizer.adagrad().epsilon());
      break;
    case OptimizerSpec::kAdam:
      problems->Fraction("optimizer.adam.beta1", optimizer.adam().beta1());
      problems->Fraction("optimizer.adam.beta2", optimizer.adam().beta2());
      problems->Positive("optimizer.adam.epsilon", optimizer.adam().epsilon());
      break;
    case OptimizerSpec::kFtrl: {
      const FtrlSpec& ftrl = optimizer.ftrl();
      problems->Require(
          std::isfinite(ftrl.learning_rate_power()) && ftrl.learning_rate_power() <= 0,
          "optimizer.ftrl.learning_rate_power", "<= 0", ftrl.learning_rate_power());
      problems->NonNegative("optimizer.ftrl.initial_accumulator", ftrl.initial_accumulator());
      problems->NonNegative("optimizer.ftrl.l1", ftrl.l1());
      problems->NonNegative("optimizer.ftrl.l2", ftrl.l2());
      break;
    }
    default:  // sgd (or unset, which means sgd) has no parameters
      break;
  }
  problems->Positive("optimizer.learning_rate", optimizer.learning_rate());

  const LearningRateSchedule& schedule = optimizer.schedule();
  switch (schedule.kind_case()) {
    case LearningRateSchedule::kStep:
      problems->Positive("optimizer.schedule.step.step_size", schedule.step().step_size());
      problems->DecayFactor("optimizer.schedule.step.factor", schedule.step().factor());
      break;
    case LearningRateSchedule::kExponential:
      problems->Positive("optimizer.schedule.exponential.decay_steps",
                         schedule.exponential().decay_steps());
      problems->DecayFactor("optimizer.schedule.exponential.rate", schedule.exponential().rate());
      break;
    case LearningRateSchedule::kCosine:
      problems->Positive("optimizer.schedule.cosine.decay_steps", schedule.cosine().decay_steps());
      problems->Require(schedule.cosine().alpha() >= 0 && schedule.cosine().alpha() <= 1,
                        "optimizer.schedule.cosine.alpha", "in [0, 1]", schedule.cosine().alpha());
      break;
    case LearningRateSchedule::KIND_NOT_SET:  // constant
      break;
  }
  problems->NonNegative("optimizer.schedule.warmup_steps", schedule.warmup_steps());
  problems->NonNegative("optimizer.clip_norm", optimizer.clip_norm());
}

void CheckTraining(const TrainingSpec& training, Problems* problems) {
  problems->KnownEnum("training.update_mode", training.update_mode(), UpdateMode_IsValid);
  problems->NonNegative("training.replicas_to_aggregate", training.replicas_to_aggregate());
  if (training.replicas_to_aggregate() != 0 && training.update_mode() != UPDATE_MODE_SYNC) {
    problems->Add(
        absl::StrCat("training.replicas_to_aggregate is only valid with update_mode SYNC, got "
                     "update_mode ",
                     UpdateModeName(training.update_mode())));
  }
  if (training.update_mode() == UPDATE_MODE_BOUNDED_STALENESS) {
    problems->Require(training.staleness_bound() >= 1, "training.staleness_bound", ">= 1",
                      training.staleness_bound());
  } else if (training.staleness_bound() != 0) {
    problems->Add(absl::StrCat(
        "training.staleness_bound is only valid with update_mode BOUNDED_STALENESS, got "
        "update_mode ",
        UpdateModeName(training.update_mode())));
  }
  problems->Positive("training.steps_per_loop", training.steps_per_loop());
  problems->Positive("training.compute_threads", training.compute_threads());
  problems->KnownEnum("training.wire.gradients", training.wire().gradients(), WireDtype_IsValid);
  problems->KnownEnum("training.wire.parameters", training.wire().parameters(), WireDtype_IsValid);
}

void CheckStop(const JobSpec& spec, Problems* problems) {
  const StopSpec& stop = spec.stop();
  problems->NonNegative("stop.max_steps", stop.max_steps());
  problems->NonNegative("stop.max_seconds", stop.max_seconds());
  problems->NonNegative("stop.early_stopping_patience", stop.early_stopping_patience());
  problems->NonNegative("stop.min_delta", stop.min_delta());
  if (stop.has_target_metric_value() && !std::isfinite(stop.target_metric_value())) {
    problems->Add(absl::StrCat("stop.target_metric_value must be a finite number, got ",
                               stop.target_metric_value()));
  }

  // Zero means "no limit"; a negative value is already reported above.
  if (JobModeTrains(spec.mode()) && stop.max_steps() == 0 && stop.max_seconds() == 0 &&
      spec.train_data().epochs() == 0) {
    problems->Add("stop: a training job needs max_steps, max_seconds or train_data.epochs");
  }
  // Both are decided on evaluations of the model being trained.
  if (spec.mode() != JOB_MODE_TRAIN_AND_EVAL) {
    if (stop.has_target_metric_value()) {
      problems->Add(
          absl::StrCat("stop.target_metric_value is only valid with mode "
                       "TRAIN_AND_EVAL, got mode ",
                       ModeName(spec.mode())));
    }
    if (stop.early_stopping_patience() > 0) {
      problems->Add(
          absl::StrCat("stop.early_stopping_patience is only valid with mode "
                       "TRAIN_AND_EVAL, got mode ",
                       ModeName(spec.mode())));
    }
  }
}

void CheckCheckpoint(const CheckpointSpec& checkpoint, Problems* problems) {
  problems->OutputPath("checkpoint.model_dir", checkpoint.model_dir(), Presence::kRequired);
  problems->NonNegative("checkpoint.every_steps", checkpoint.every_steps());
  problems->NonNegative("checkpoint.every_seconds", checkpoint.every_seconds());
  problems->NonNegative("checkpoint.max_to_keep", checkpoint.max_to_keep());
  problems->NonNegative("checkpoint.max_consecutive_failures",
                        checkpoint.max_consecutive_failures());
  problems->OutputPath("checkpoint.warm_start_from", checkpoint.warm_start_from(),
                       Presence::kOptional);
}

void CheckEval(const EvalSpec& eval, Problems* problems) {
  problems->NonNegative("eval.steps", eval.steps());
  problems->NonNegative("eval.throttle_secs", eval.throttle_secs());
  problems->NonNegative("eval.start_delay_secs", eval.start_delay_secs());
  if (eval.metrics().empty()) problems->Add("eval.metrics must not be empty");
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < eval.metrics_size(); ++i) {
    const std::string& metric = eval.metrics(i);
    if (!IsKnownMetricName(metric)) {
      problems->Add(
          absl::StrCat("eval.metrics[", i, "] ", Quote(metric),
                       " is not a known metric: ", absl::StrJoin(KnownMetricNames(), ", ")));
    } else if (!seen.insert(metric).second) {
      problems->Add(absl::StrCat("eval.metrics[", i, "] ", Quote(metric), " is listed twice"));
    }
  }
  problems->Positive("eval.top_k", eval.top_k());
  bool listed = false;
  for (const std::string& metric : eval.metrics()) listed = listed || metric == eval.best_metric();
  if (!listed) {
    problems->Add(absl::StrCat("eval.best_metric ", Quote(eval.best_metric()),
                               " must be one of eval.metrics [",
                               absl::StrJoin(eval.metrics(), ", "), "]"));
  }
  problems->KnownEnum("eval.best_direction", eval.best_direction(), MetricDirection_IsValid);
}

void CheckExport(const JobSpec& spec, Problems* problems) {
  const ExportSpec& export_spec = spec.export_();
  problems->KnownEnum("export.strategy", export_spec.strategy(), ExportStrategy_IsValid);
  if (export_spec.strategy() == EXPORT_STRATEGY_BEST && !JobModeEvaluates(spec.mode())) {
    problems->Add(absl::StrCat(
        "export.strategy BEST needs a mode that evaluates (to rank checkpoints), got mode ",
        ModeName(spec.mode())));
  }
  // The default export_dir lies under model_dir: a problem with model_dir is
  // reported there, once.
  const std::string& model_dir = spec.checkpoint().model_dir();
  const bool under_model_dir =
      !model_dir.empty() && absl::StartsWith(export_spec.export_dir(), model_dir);
  if (!under_model_dir) {
    problems->OutputPath("export.export_dir", export_spec.export_dir(),
                         export_spec.strategy() != EXPORT_STRATEGY_NONE && !model_dir.empty()
                             ? Presence::kRequired
                             : Presence::kOptional);
  }
  problems->NonNegative("export.exports_to_keep", export_spec.exports_to_keep());
}

}  // namespace

absl::Status ValidateModelSpec(const ModelSpec& model) {
  Problems problems;
  CheckModel(model, &problems);
  return problems.ToStatus();
}

absl::Status ValidateDataSpec(absl::string_view path, const DataSpec& data) {
  Problems problems;
  CheckData(path, data, &problems);
  return problems.ToStatus();
}

absl::Status ValidateOptimizerSpec(const OptimizerSpec& optimizer) {
  Problems problems;
  CheckOptimizer(optimizer, &problems);
  return problems.ToStatus();
}

absl::Status ValidateJobSpec(const JobSpec& spec) {
  Problems problems;
  CheckName(spec.name(), &problems);
  problems.KnownEnum("mode", spec.mode(), JobMode_IsValid);
  CheckModel(spec.model(), &problems);

  if (spec.has_train_data()) {
    CheckData("train_data", spec.train_data(), &problems);
    CheckModelReadsData(spec.model(), "train_data", spec.train_data(), &problems);
  } else if (JobModeTrains(spec.mode())) {
    problems.Add(absl::StrCat("train_data is required for mode ", ModeName(spec.mode())));
  }
  if (spec.has_eval_data()) {
    CheckData("eval_data", spec.eval_data(), &problems);
    CheckModelReadsData(spec.model(), "eval_data", spec.eval_data(), &problems);
  } else if (JobModeEvaluates(spec.mode())) {
    problems.Add(absl::StrCat("eval_data is required for mode ", ModeName(spec.mode())));
  }

  CheckOptimizer(spec.optimizer(), &problems);
  CheckTraining(spec.training(), &problems);
  CheckStop(spec, &problems);
  CheckCheckpoint(spec.checkpoint(), &problems);
  CheckEval(spec.eval(), &problems);
  CheckExport(spec, &problems);
  return problems.ToStatus();
}

}  // namespace pstrain
