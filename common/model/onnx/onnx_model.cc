#include "common/model/onnx/onnx_model.h"

#include <fnmatch.h>

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
  // Each table's options: those of the one entry that names it.
  std::vector<std::string> named;
  absl::flat_hash_map<std::string, const OnnxDynamicTable*> options;
  for (int i = 0; i < spec.dynamic_tables_size(); ++i) {
    const std::string& pattern = spec.dynamic_tables(i).initializer();
    const std::string field = absl::StrCat("model.onnx.dynamic_tables[", i, "]: ");
    int matched = 0;
    for (const std::string& name : table_names) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
      ++matched;
      if (options.contains(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, "names table ", name, " a second time"));
      }
      options[name] = &spec.dynamic_tables(i);
      named.push_back(name);
    }
    if (matched == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, spec.path(), " has no embedding table ", pattern,
          table_names.empty() ? " (an initializer whose rows a Gather picks by ids)"
                              : absl::StrCat("; its tables: ", absl::StrJoin(table_names, ", "))));
    }
  }
  absl::flat_hash_map<std::string, VariableDef> dynamic;
  if (named.empty()) return dynamic;
  ASSIGN_OR_RETURN(const auto values, ReadOnnxInitializers(spec.path(), named));
  for (const std::string& name : named) {
    dynamic[name] = DynamicTable(*tables.at(name), *options.at(name), values.at(name), seed);
  }
  return dynamic;
}

// Whether each fixed table has a row for every id the data may give it.
absl::Status CheckTables(const OnnxModelSpec& spec, const OnnxProgram& program,
                         const absl::flat_hash_map<std::string, VariableDef>& dynamic,
                         const DatasetInfo& info) {
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
  ASSIGN_OR_RETURN(std::vector<OnnxInputBinding> bindings,
                   BindOnnxInputs(spec, program->inputs(), info));
  RETURN_IF_ERROR(CheckTables(spec, *program, dynamic, info));
  ASSIGN_OR_RETURN(const PredictionKind kind, KindOf(spec, program->output_width()));
  return std::unique_ptr<OnnxModel>(new OnnxModel(
      spec.path(), std::move(program), std::move(dynamic), std::move(bindings), kind, context));
}

OnnxModel::OnnxModel(std::string path, std::unique_ptr<OnnxProgram> program, DynamicTables dynamic,
                     std::vector<OnnxInputBinding> bindings, PredictionKind kind,
                     const ModelContext& context)
    : path_(std::move(path)),
      program_(std::move(program)),
      bindings_(std::move(bindings)),
      inputs_(program_->inputs(), bindings_),
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

absl::Status OnnxModel::CheckRows(const RowIds& rows) const {
  for (const OnnxInitializer& table : program_->initializers()) {
    if (!table.embedding_table || dynamic_.contains(table.name)) continue;
    auto ids = rows.find(table.name);
    if (ids == rows.end() || ids->second.empty()) continue;
    // Ascending: the first and the last are the ones to check.
    for (int64_t id : {ids->second.front(), ids->second.back()}) {
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
  if (!inputs_.takes_ids()) return RowIds();
  ASSIGN_OR_RETURN(const std::vector<OnnxInputData> inputs, inputs_.Fill(batch));
  ASSIGN_OR_RETURN(RowIds rows, program_->TableIds(batch.size, inputs));
  RETURN_IF_ERROR(CheckRows(rows));
  return rows;
}

absl::Status OnnxModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                PassMode mode, ModelOutput* output) {
  const uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ull * ++passes_);
  ASSIGN_OR_RETURN(const std::vector<OnnxInputData> inputs, inputs_.Fill(batch));
  ASSIGN_OR_RETURN(const float* logits,
                   program_->Forward(parameters, batch.size, inputs, mode, seed));
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
  const std::vector<OnnxGraphInput>& inputs = program_->inputs();
  std::vector<std::string> names;
  if (inputs.size() == 1 && bindings_[0].part == OnnxInputBinding::Part::kDense) {
    // One input of features is the export's "dense", as a built-in model's.
    const std::string dense = graph.DenseInput(inputs[0].width);
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), inputs[0].dims.begin(), inputs[0].dims.end());
    names.push_back(
        dims.size() == 2
            ? dense
            : graph.Node("Reshape",
                         {dense, graph.Int64Constant({static_cast<int64_t>(dims.size())}, dims)}));
  } else if (inputs.size() == 1 && bindings_[0].part == OnnxInputBinding::Part::kIds &&
             inputs[0].dims.size() == 1) {
    names.push_back(graph.SparseInput(inputs[0].width).ids);
  } else {
    // Several inputs keep their names and shapes, to be fed as in training.
    for (size_t i = 0; i < inputs.size(); ++i) {
      names.push_back(graph.Input(inputs[i].name, inputs[i].is_int64, inputs[i].dims,
                                  OnnxInputMeaning(bindings_[i])));
    }
  }
  head_.DescribeOnnx(graph, program_->Describe(graph, names));
  return absl::OkStatus();
}

}  // namespace pstrain
