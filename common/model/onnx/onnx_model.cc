#include "common/model/onnx/onnx_model.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/embedding_lookup.h"
#include "common/onnx/onnx_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// The loss the spec names, or the default for an output of `width`.
absl::StatusOr<PredictionKind> KindOf(const OnnxModelSpec& spec, int64_t width) {
  switch (spec.loss()) {
    case ONNX_LOSS_UNSPECIFIED:
      return width >= 2 ? PredictionKind::kClassProbabilities : PredictionKind::kBinaryProbability;
    case ONNX_LOSS_SOFTMAX_CROSS_ENTROPY:
      if (width < 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model.onnx.loss softmax cross-entropy needs an output of 2 or more class scores; ",
            spec.path(), " gives ", width, " per example"));
      }
      return PredictionKind::kClassProbabilities;
    case ONNX_LOSS_SIGMOID_CROSS_ENTROPY:
    case ONNX_LOSS_MEAN_SQUARED_ERROR:
      if (width != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("model.onnx.loss ", OnnxLoss_Name(spec.loss()),
                         " needs one output value per example; ", spec.path(), " gives ", width));
      }
      return spec.loss() == ONNX_LOSS_MEAN_SQUARED_ERROR ? PredictionKind::kRegression
                                                         : PredictionKind::kBinaryProbability;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("model.onnx.loss ", static_cast<int>(spec.loss()), " is unknown"));
  }
}

// The graph's table `init` as a dynamic table, `options` as the spec sets
// them: any id's row is drawn from a normal distribution like the graph's
// rows, `values` (a table of any ids has no rows to take from the file).
VariableDef DynamicTable(const OnnxInitializer& init, const OnnxDynamicTable& options,
                         const std::vector<float>& values, uint64_t seed) {
  double sum = 0, squares = 0;
  for (float v : values) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  const double n = std::max<double>(1, values.size());
  const double mean = sum / n;
  VariableDef def;
  def.spec.set_name(init.name);
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  def.spec.mutable_shape()->add_dims(0);
  def.spec.mutable_shape()->add_dims(init.dims[1]);
  EmbeddingSpec* embedding = def.spec.mutable_embedding();
  embedding->set_dim(static_cast<int32_t>(init.dims[1]));
  embedding->set_admit_after(std::max(1, options.admit_after()));
  embedding->set_max_bytes_per_shard(options.max_bytes_per_shard());
  InitializerSpec* initializer = def.spec.mutable_initializer();
  initializer->set_kind(INITIALIZER_KIND_NORMAL);
  initializer->set_mean(static_cast<float>(mean));
  initializer->set_stddev(static_cast<float>(std::sqrt(std::max(0.0, squares / n - mean * mean))));
  initializer->set_seed(seed);
  return def;
}

// The variables of the tables spec.dynamic_tables names, each an embedding
// table of the graph, once; their values read in one pass over the file.
absl::StatusOr<absl::flat_hash_map<std::string, VariableDef>> DynamicTablesOf(
    const OnnxModelSpec& spec, const OnnxProgram& program, uint64_t seed) {
  std::vector<std::string> table_names;
  absl::flat_hash_map<std::string, const OnnxInitializer*> tables;
  for (const OnnxInitializer& init : program.initializers()) {
    if (!init.embedding_table) continue;
    table_names.push_back(init.name);
    tables[init.name] = &init;
  }
  std::vector<std::string> named;
  for (int i = 0; i < spec.dynamic_tables_size(); ++i) {
    const std::string& name = spec.dynamic_tables(i).initializer();
    const std::string field = absl::StrCat("model.onnx.dynamic_tables[", i, "]: ");
    if (!tables.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, spec.path(), " has no embedding table ", name,
          table_names.empty() ? " (an initializer whose rows a Gather picks by the input's ids)"
                              : absl::StrCat("; its tables: ", absl::StrJoin(table_names, ", "))));
    }
    if (std::find(named.begin(), named.end(), name) != named.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "names table ", name, " a second time"));
    }
    named.push_back(name);
  }
  absl::flat_hash_map<std::string, VariableDef> dynamic;
  if (named.empty()) return dynamic;
  ASSIGN_OR_RETURN(const auto values, ReadOnnxInitializers(spec.path(), named));
  for (const OnnxDynamicTable& table : spec.dynamic_tables()) {
    const std::string& name = table.initializer();
    dynamic[name] = DynamicTable(*tables.at(name), table, values.at(name), seed);
  }
  return dynamic;
}

// Whether the data gives what the graph's input takes: features of its
// width, or one id per field for as many fields, each with a row in every
// fixed table.
absl::Status CheckInput(const OnnxModelSpec& spec, const OnnxProgram& program,
                        const absl::flat_hash_map<std::string, VariableDef>& dynamic,
                        const DatasetInfo& info) {
  const std::string input = absl::StrCat(spec.path(), ": input ", program.input_name(), " takes ");
  if (!program.input_is_ids()) {
    if (info.dense_dim == 0 && info.sparse_dim > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(input,
                       "float features; the training data has only sparse ids (a graph over ids "
                       "takes int64 [batch, fields])"));
    }
    if (info.dense_dim > 0 && program.input_width() != info.dense_dim) {
      return absl::InvalidArgumentError(absl::StrCat(input, program.input_width(),
                                                     " features per example; the training data "
                                                     "has ",
                                                     info.dense_dim));
    }
    return absl::OkStatus();
  }
  if (info.sparse_dim == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(input, "int64 ids; the training data has no sparse ids"));
  }
  if (info.num_fields != program.input_width()) {
    return absl::InvalidArgumentError(absl::StrCat(
        input, program.input_width(), " ids per example (one per field); the training data has ",
        info.num_fields == 0 ? "a varying number" : absl::StrCat(info.num_fields)));
  }
  for (const OnnxInitializer& table : program.initializers()) {
    if (table.embedding_table && !dynamic.contains(table.name) && table.dims[0] < info.sparse_dim) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec.path(), ": embedding table ", table.name, " has ", table.dims[0],
                       " rows; the training data's ids go up to ", info.sparse_dim - 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxModel>> OnnxModel::Create(const OnnxModelSpec& spec,
                                                             const DatasetInfo& info,
                                                             const ModelContext& context) {
  ASSIGN_OR_RETURN(std::unique_ptr<OnnxProgram> program,
                   OnnxProgram::Load(spec.path(), spec.output()));
  ASSIGN_OR_RETURN(DynamicTables dynamic, DynamicTablesOf(spec, *program, context.seed));
  RETURN_IF_ERROR(CheckInput(spec, *program, dynamic, info));
  ASSIGN_OR_RETURN(const PredictionKind kind, KindOf(spec, program->output_width()));
  return std::unique_ptr<OnnxModel>(
      new OnnxModel(spec.path(), std::move(program), std::move(dynamic), kind, context));
}

OnnxModel::OnnxModel(std::string path, std::unique_ptr<OnnxProgram> program, DynamicTables dynamic,
                     PredictionKind kind, const ModelContext& context)
    : path_(std::move(path)),
      program_(std::move(program)),
      dynamic_(std::move(dynamic)),
      head_(context.compute, kind, program_->output_width()),
      seed_(context.seed) {}

std::vector<VariableDef> OnnxModel::Variables() const {
  std::vector<VariableDef> defs;
  for (const OnnxInitializer& init : program_->initializers()) {
    if (auto dynamic = dynamic_.find(init.name); dynamic != dynamic_.end()) {
      defs.push_back(dynamic->second);
      continue;
    }
    VariableDef def;
    def.trainable = init.trainable;
    def.spec.set_name(init.name);
    def.spec.set_kind(init.embedding_table ? VARIABLE_KIND_EMBEDDING : VARIABLE_KIND_DENSE);
    def.spec.set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : init.dims) def.spec.mutable_shape()->add_dims(d);
    if (init.embedding_table) {
      def.spec.mutable_embedding()->set_vocabulary_size(init.dims[0]);
      def.spec.mutable_embedding()->set_dim(static_cast<int32_t>(init.dims[1]));
    }
    InitializerSpec* initializer = def.spec.mutable_initializer();
    initializer->set_kind(INITIALIZER_KIND_ONNX_TENSOR);
    initializer->set_onnx_path(path_);
    initializer->set_onnx_tensor(init.name);
    defs.push_back(std::move(def));
  }
  return defs;
}

absl::Status OnnxModel::CheckIds(const ExampleBatch& batch) const {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": input ", program_->input_name(),
                                                   " takes ids; the batch has no sparse ids"));
  }
  const int64_t fields = program_->input_width();
  for (int64_t i = 0; i < batch.size; ++i) {
    if (batch.row_splits[i + 1] - batch.row_splits[i] != fields) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, " has ", batch.row_splits[i + 1] - batch.row_splits[i],
                       " ids; ", path_, " takes one per field, ", fields));
    }
  }
  for (const OnnxInitializer& table : program_->initializers()) {
    if (!table.embedding_table || dynamic_.contains(table.name)) continue;
    for (int64_t id : batch.sparse_ids) {
      if (id < 0 || id >= table.dims[0]) {
        return absl::InvalidArgumentError(absl::StrCat("id ", id, " outside embedding table ",
                                                       table.name, "'s rows [0, ", table.dims[0],
                                                       ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RowIds> OnnxModel::RowsToRead(const ExampleBatch& batch) const {
  RowIds rows;
  if (!program_->input_is_ids()) return rows;
  RETURN_IF_ERROR(CheckIds(batch));
  const std::vector<int64_t> ids = EmbeddingLookup::UniqueIds(batch.sparse_ids);
  for (const OnnxInitializer& table : program_->initializers()) {
    if (table.embedding_table) rows[table.name] = ids;
  }
  return rows;
}

absl::Status OnnxModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                PassMode mode, ModelOutput* output) {
  const uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ull * ++passes_);
  const float* logits = nullptr;
  if (program_->input_is_ids()) {
    RETURN_IF_ERROR(CheckIds(batch));
    ASSIGN_OR_RETURN(logits,
                     program_->Forward(parameters, batch.size, batch.sparse_ids, mode, seed));
  } else {
    ASSIGN_OR_RETURN(const float* input, DenseInput(batch, program_->input_width()));
    ASSIGN_OR_RETURN(logits, program_->Forward(parameters, batch.size, input, mode, seed));
  }
  return head_.Forward(batch.size, logits, batch.labels, output);
}

absl::Status OnnxModel::ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                         ModelOutput* output, Gradients* gradients) {
  RETURN_IF_ERROR(Forward(parameters, batch, PassMode::kTrain, output));
  d_output_.resize(batch.size * head_.width());
  RETURN_IF_ERROR(head_.Backward(batch.size, *output, batch.labels, d_output_.data()));
  return program_->Backward(parameters, d_output_.data(), gradients);
}

absl::Status OnnxModel::DescribeOnnx(OnnxGraph& graph) const {
  const std::string input = program_->input_is_ids()
                                ? graph.SparseInput(program_->input_width()).ids
                                : graph.DenseInput(program_->input_width());
  head_.DescribeOnnx(graph, program_->Describe(graph, input));
  return absl::OkStatus();
}

}  // namespace pstrain
