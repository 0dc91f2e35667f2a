#include "common/model/onnx/onnx_program.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/file_path.h"
#include "common/model/onnx/onnx_kernels.h"
#include "common/onnx/onnx_file.h"
#include "common/status/status_macros.h"

namespace pstrain {

namespace onnx_internal {

// What Load found: the nodes in order, and every value by index, with the
// constants filled in.
struct LoadedGraph {
  // A Gather of an embedding table's rows by ids. The node reads `rows` in
  // place of `ids`: for each id, its row among the rows a pass is given.
  static constexpr size_t kNoTable = ~size_t{0};
  struct Lookup {
    int node = -1;
    // Initializer index; kNoTable when only other outputs need the node
    // (it is planned, for the shapes, but never runs).
    size_t table = kNoTable;
    int ids = -1;   // value index
    int rows = -1;  // value index
  };

  std::vector<OnnxNode> nodes;
  std::vector<const OnnxKernel*> kernels;
  std::vector<bool> needed;          // by node: the trained output depends on it
  std::vector<std::string> names;    // by value index
  std::vector<OnnxValue> constants;  // by value index; known ones filled
  std::vector<int> parameters;       // value index of each initializer
  std::vector<int> inputs;           // value index of each graph input
  std::vector<bool> ids;             // by value index: ids, or selected from them
  int64_t opset = 0;                 // of the default domain
  int output = -1;
  std::vector<Lookup> lookups;

  bool IsTableRows(int value) const {
    return std::any_of(lookups.begin(), lookups.end(),
                       [&](const Lookup& lookup) { return lookup.rows == value; });
  }
  const Lookup* LookupAt(int node) const {
    for (const Lookup& lookup : lookups) {
      if (lookup.node == node) return &lookup;
    }
    return nullptr;
  }
};

// The values for one batch size, and which nodes run per batch: first
// those that select ids from the inputs, then the rest.
struct Plan {
  int64_t batch = 0;
  std::vector<OnnxValue> values;
  std::vector<int> id_steps;  // node indices, in order
  std::vector<int> steps;     // node indices, in order
  std::mt19937_64 random;
  absl::flat_hash_map<int64_t, int64_t> row_of_id;  // scratch of BindParameter
};

}  // namespace onnx_internal

namespace {

using onnx_internal::LoadedGraph;

absl::Status Refuse(const std::string& origin, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": ", why));
}

absl::Status Refuse(const std::string& origin, const OnnxNode& node, const std::string& why) {
  return Refuse(origin, absl::StrCat("node ", node.name, " (", node.op, "): ", why));
}

// The opset of the default domain the model imports.
absl::StatusOr<int64_t> CheckOpsets(const onnx::ModelProto& model, const std::string& origin) {
  int64_t found = 0;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (!opset.domain().empty() && opset.domain() != "ai.onnx") {
      return Refuse(origin, absl::StrCat("imports the operator domain ", opset.domain(),
                                         "; only ONNX's default domain loads"));
    }
    if (opset.version() < kMinOnnxOpset || opset.version() > kMaxOnnxOpset) {
      return Refuse(origin, absl::StrCat("opset ", opset.version(), " is outside the supported [",
                                         kMinOnnxOpset, ", ", kMaxOnnxOpset, "]"));
    }
    found = opset.version();
  }
  if (found == 0) return Refuse(origin, "imports no opset: not an ONNX model");
  return found;
}

// The ops whose output, read from ids (their first input), holds ids too:
// they select or rearrange them without computing with them.
bool SelectsIds(const std::string& op) {
  static const char* const kSelections[] = {"Gather",  "Squeeze", "Unsqueeze",
                                            "Reshape", "Flatten", "Identity"};
  return std::any_of(std::begin(kSelections), std::end(kSelections),
                     [&](const char* selection) { return op == selection; });
}

// Builds `graph` from the proto's nodes, inputs, outputs and initializers.
class GraphBuilder {
 public:
  GraphBuilder(const std::string& origin, const std::string& data_folder)
      : origin_(origin), data_folder_(data_folder) {}

  // `output`: the graph output to compute; empty: its only one.
  absl::Status Build(const onnx::GraphProto& proto, const std::string& output, LoadedGraph* graph,
                     std::vector<OnnxInitializer>* initializers,
                     std::vector<OnnxGraphInput>* inputs);

 private:
  int Add(const std::string& name, OnnxValue value) {
    const int index = static_cast<int>(graph_->names.size());
    graph_->names.push_back(name);
    graph_->constants.push_back(std::move(value));
    graph_->ids.push_back(false);
    index_[name] = index;
    return index;
  }
  absl::Status AddInitializers(const onnx::GraphProto& proto,
                               std::vector<OnnxInitializer>* initializers);
  absl::Status AddInputs(const onnx::GraphProto& proto);
  absl::Status AddNode(const onnx::NodeProto& proto, int position);
  // A Constant node: its value becomes a constant of the graph.
  absl::Status AddConstant(const onnx::NodeProto& proto, const OnnxNode& node);
  // Whether the node gives its kernel the inputs it takes.
  absl::Status CheckArity(const onnx::NodeProto& proto, const OnnxKernel& kernel,
                          const OnnxNode& node) const;
  // Links the node's inputs to the values before it and adds its outputs.
  absl::Status Connect(const onnx::NodeProto& proto, OnnxNode& node);
  // Copies the node's attributes of the types the kernels read.
  absl::Status TakeAttributes(const onnx::NodeProto& proto, OnnxNode& node) const;
  absl::Status FindTables(std::vector<OnnxInitializer>& initializers);
  // Marks the initializers read only as a BatchNormalization's mean or
  // variance as statistics (OnnxInitializer::trainable).
  void FindStatistics(std::vector<OnnxInitializer>& initializers) const;

  const std::string origin_;
  const std::string data_folder_;
  LoadedGraph* graph_ = nullptr;
  std::vector<OnnxGraphInput>* inputs_ = nullptr;
  absl::flat_hash_map<std::string, int> index_;
};

absl::Status GraphBuilder::AddInitializers(const onnx::GraphProto& proto,
                                           std::vector<OnnxInitializer>* initializers) {
  for (const onnx::TensorProto& tensor : proto.initializer()) {
    ASSIGN_OR_RETURN(
        OnnxValue value,
        DecodeOnnxTensor(tensor, absl::StrCat(origin_, ": initializer ", tensor.name()),
                         data_folder_));
    if (index_.contains(tensor.name())) {
      return Refuse(origin_, absl::StrCat("initializer ", tensor.name(), " is defined twice"));
    }
    if (value.is_int64) {
      Add(tensor.name(), std::move(value));
      continue;
    }
    for (float v : value.floats) {
      if (!std::isfinite(v)) {
        return Refuse(origin_, absl::StrCat("initializer ", tensor.name(), " holds ", v,
                                            ", not a finite value to start training from"));
      }
    }
    initializers->push_back({tensor.name(), value.dims});
    OnnxValue parameter;
    parameter.dims = value.dims;
    graph_->parameters.push_back(Add(tensor.name(), std::move(parameter)));
  }
  if (graph_->parameters.empty()) {
    return Refuse(origin_, "has no float initializer: nothing to train");
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddInputs(const onnx::GraphProto& proto) {
  for (const onnx::ValueInfoProto& input : proto.input()) {
    if (index_.contains(input.name())) continue;  // an initializer listed as an input
    const onnx::TypeProto_Tensor& type = input.type().tensor_type();
    const int rank = type.shape().dim_size();
    const bool ids = type.elem_type() == onnx::TensorProto::INT64 && (rank == 1 || rank == 2);
    if (!ids && (type.elem_type() != onnx::TensorProto::FLOAT || rank < 1)) {
      return Refuse(origin_, absl::StrCat("input ", input.name(),
                                          " is neither float32 [batch, ...] nor int64 ids [batch] "
                                          "or [batch, n]"));
    }
    OnnxGraphInput declared;
    declared.name = input.name();
    declared.is_int64 = ids;
    for (int d = 1; d < rank; ++d) {
      const int64_t size = type.shape().dim(d).dim_value();
      if (size <= 0) {
        return Refuse(origin_, absl::StrCat("input ", input.name(), " has dim ", d,
                                            " of no fixed size; only the batch may vary"));
      }
      if (size > kMaxOnnxValueElements) {
        return Refuse(origin_, absl::StrCat("input ", input.name(), " has dim ", d, " of ", size,
                                            ", too large"));
      }
      declared.dims.push_back(size);
    }
    declared.width = OnnxElements(declared.dims);
    if (declared.width < 1) {
      return Refuse(origin_, absl::StrCat("input ", input.name(), " holds over ",
                                          kMaxOnnxValueElements, " values per example"));
    }
    OnnxValue value;
    value.is_int64 = ids;
    const int index = Add(input.name(), std::move(value));
    graph_->ids[index] = ids;
    graph_->inputs.push_back(index);
    inputs_->push_back(std::move(declared));
  }
  if (graph_->inputs.empty()) return Refuse(origin_, "has no input besides its initializers");
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddNode(const onnx::NodeProto& proto, int position) {
  OnnxNode node;
  node.op = proto.op_type();
  node.name = !proto.name().empty()     ? proto.name()
              : proto.output_size() > 0 ? proto.output(0)
                                        : absl::StrCat("#", position);
  auto refuse = [&](const std::string& why) { return Refuse(origin_, node, why); };
  if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
    return refuse(absl::StrCat("domain ", proto.domain(), " is not supported"));
  }
  if (proto.output_size() < 1 || proto.output(0).empty()) return refuse("has no output");
  if (node.op == "Constant") return AddConstant(proto, node);
  if (node.op == "Loop") {
    return refuse(
        "pstrain trains feed-forward graphs, without loops; torch.onnx.export writes "
        "nn.EmbeddingBag this way. Write a bag as nn.Embedding over ids padded to [batch, n], "
        "times their weights (0 for padding) and summed over the ids; divide by their count for "
        "a mean (docs/models.md, \"Embedding bags\")");
  }
  const OnnxKernel* kernel = FindOnnxKernel(node.op);
  if (kernel == nullptr) {
    return refuse(absl::StrCat(
        "not supported by pstrain's ONNX import (supported: ", SupportedOnnxOps(), ")"));
  }
  RETURN_IF_ERROR(CheckArity(proto, *kernel, node));
  RETURN_IF_ERROR(Connect(proto, node));
  RETURN_IF_ERROR(TakeAttributes(proto, node));
  if (SelectsIds(node.op) && node.inputs[0] >= 0 && graph_->ids[node.inputs[0]]) {
    for (int out : node.outputs) {
      if (out >= 0) graph_->ids[out] = true;
    }
  }
  graph_->nodes.push_back(std::move(node));
  graph_->kernels.push_back(kernel);
  return absl::OkStatus();
}

absl::Status GraphBuilder::AddConstant(const onnx::NodeProto& proto, const OnnxNode& node) {
  if (proto.attribute_size() != 1 || proto.attribute(0).name() != "value" ||
      proto.output_size() != 1) {
    return Refuse(origin_, node, "only one output with a tensor 'value' is supported");
  }
  if (index_.contains(proto.output(0))) {
    return Refuse(origin_, node, absl::StrCat("writes ", proto.output(0), " a second time"));
  }
  for (const onnx::AttributeProto& attribute : proto.attribute()) {
    ASSIGN_OR_RETURN(
        OnnxValue value,
        DecodeOnnxTensor(attribute.t(), absl::StrCat(origin_, ": node ", node.name), data_folder_));
    Add(proto.output(0), std::move(value));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::CheckArity(const onnx::NodeProto& proto, const OnnxKernel& kernel,
                                      const OnnxNode& node) const {
  if (proto.input_size() < kernel.min_inputs || proto.input_size() > kernel.max_inputs) {
    const std::string takes = kernel.max_inputs == kOnnxAnyNumberOfInputs
                                  ? absl::StrCat(kernel.min_inputs, " or more")
                              : kernel.max_inputs > kernel.min_inputs
                                  ? absl::StrCat(kernel.min_inputs, " to ", kernel.max_inputs)
                                  : absl::StrCat(kernel.min_inputs);
    return Refuse(origin_, node,
                  absl::StrCat("has ", proto.input_size(), " inputs; it takes ", takes));
  }
  for (int i = 0; i < kernel.min_inputs; ++i) {
    if (proto.input(i).empty()) {
      return Refuse(origin_, node, absl::StrCat("leaves its input ", i, " out"));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::Connect(const onnx::NodeProto& proto, OnnxNode& node) {
  for (const std::string& input : proto.input()) {
    if (input.empty()) {
      node.inputs.push_back(-1);
      continue;
    }
    auto it = index_.find(input);
    if (it == index_.end()) {
      return Refuse(origin_, node,
                    absl::StrCat("reads ", input, ", which no earlier node or initializer gives"));
    }
    node.inputs.push_back(it->second);
  }
  for (const std::string& output : proto.output()) {
    if (output.empty()) {
      node.outputs.push_back(-1);
      continue;
    }
    if (index_.contains(output)) {
      return Refuse(origin_, node, absl::StrCat("writes ", output, " a second time"));
    }
    node.outputs.push_back(Add(output, OnnxValue()));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::TakeAttributes(const onnx::NodeProto& proto, OnnxNode& node) const {
  for (const onnx::AttributeProto& attribute : proto.attribute()) {
    if (attribute.type() == onnx::AttributeProto::INT) {
      node.int_attributes[attribute.name()] = attribute.i();
    } else if (attribute.type() == onnx::AttributeProto::FLOAT) {
      node.float_attributes[attribute.name()] = attribute.f();
    } else if (attribute.type() == onnx::AttributeProto::INTS) {
      node.ints_attributes[attribute.name()].assign(attribute.ints().begin(),
                                                    attribute.ints().end());
    } else if (attribute.type() == onnx::AttributeProto::STRING) {
      node.string_attributes[attribute.name()] = attribute.s();
    } else {
      return Refuse(origin_, node,
                    absl::StrCat("its attribute ", attribute.name(), " (of ONNX type ",
                                 attribute.type(), ") is not supported"));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::FindTables(std::vector<OnnxInitializer>& initializers) {
  absl::flat_hash_map<int, size_t> initializer_of;  // by value index
  for (size_t p = 0; p < initializers.size(); ++p) initializer_of[graph_->parameters[p]] = p;
  for (size_t n = 0; n < graph_->nodes.size(); ++n) {
    OnnxNode& node = graph_->nodes[n];
    if (node.op != "Gather" || !graph_->ids[node.inputs[1]]) continue;
    const std::string& ids = graph_->names[node.inputs[1]];
    auto found = initializer_of.find(node.inputs[0]);
    if (found == initializer_of.end()) {
      if (graph_->ids[node.inputs[0]]) continue;  // ids picked by ids: refused when planned
      return Refuse(origin_, node,
                    absl::StrCat("gathers from ", graph_->names[node.inputs[0]], " by the ids of ",
                                 ids, "; only an initializer's rows (an embedding table) can be"));
    }
    OnnxInitializer& table = initializers[found->second];
    if (table.dims.size() != 2 || node.IntAttribute("axis", 0) != 0) {
      return Refuse(origin_, node,
                    absl::StrCat("gathers from initializer ", table.name, " [",
                                 absl::StrJoin(table.dims, ", "), "]", " along axis ",
                                 node.IntAttribute("axis", 0),
                                 "; an embedding table is [rows, dim], gathered along axis 0"));
    }
    table.embedding_table = true;
    LoadedGraph::Lookup lookup;
    lookup.node = static_cast<int>(n);
    lookup.table = found->second;
    lookup.ids = node.inputs[1];
    OnnxValue rows;
    rows.is_int64 = true;
    lookup.rows = Add(absl::StrCat(table.name, "[rows of ", ids, "]"), std::move(rows));
    node.inputs[1] = lookup.rows;
    graph_->lookups.push_back(lookup);
  }
  // A table stays on the parameter servers, and a pass holds only the rows
  // its batch names.
  for (size_t n = 0; n < graph_->nodes.size(); ++n) {
    const OnnxNode& node = graph_->nodes[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto found = initializer_of.find(node.inputs[i]);
      if (found == initializer_of.end() || !initializers[found->second].embedding_table) continue;
      if (i == 0 && graph_->LookupAt(static_cast<int>(n)) != nullptr) continue;  // its lookup
      return Refuse(origin_, node,
                    absl::StrCat("reads embedding table ", initializers[found->second].name,
                                 " whole; pstrain keeps a table's rows on the parameter servers "
                                 "and a pass reads only those its batch's ids name"));
    }
  }
  return absl::OkStatus();
}

void GraphBuilder::FindStatistics(std::vector<OnnxInitializer>& initializers) const {
  for (size_t p = 0; p < initializers.size(); ++p) {
    bool read = false, statistic = true;
    for (const OnnxNode& node : graph_->nodes) {
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.inputs[i] != graph_->parameters[p]) continue;
        read = true;
        statistic = statistic && node.op == "BatchNormalization" && (i == 3 || i == 4);
      }
    }
    initializers[p].trainable = !(read && statistic);
  }
}

absl::Status GraphBuilder::Build(const onnx::GraphProto& proto, const std::string& output,
                                 LoadedGraph* graph, std::vector<OnnxInitializer>* initializers,
                                 std::vector<OnnxGraphInput>* inputs) {
  graph_ = graph;
  inputs_ = inputs;
  RETURN_IF_ERROR(AddInitializers(proto, initializers));
  RETURN_IF_ERROR(AddInputs(proto));
  // A loop is refused for what it is, before anything inside it.
  for (int i = 0; i < proto.node_size(); ++i) {
    if (proto.node(i).op_type() == "Loop") RETURN_IF_ERROR(AddNode(proto.node(i), i));
  }
  for (int i = 0; i < proto.node_size(); ++i) RETURN_IF_ERROR(AddNode(proto.node(i), i));
  RETURN_IF_ERROR(FindTables(*initializers));
  std::vector<std::string> outputs;
  for (const onnx::ValueInfoProto& value : proto.output()) outputs.push_back(value.name());
  const std::string listed = absl::StrJoin(outputs, ", ");
  if (outputs.empty()) return Refuse(origin_, "has no output");
  if (output.empty() && outputs.size() > 1) {
    return Refuse(origin_, absl::StrCat("has ", outputs.size(), " outputs (", listed,
                                        "); name the one to train in model.onnx.output"));
  }
  const std::string& chosen = output.empty() ? outputs.front() : output;
  if (std::find(outputs.begin(), outputs.end(), chosen) == outputs.end()) {
    return Refuse(origin_, absl::StrCat("has no output ", chosen, "; its outputs: ", listed));
  }
  auto computed = index_.find(chosen);
  if (computed == index_.end()) {
    return Refuse(origin_, absl::StrCat("output ", chosen, " is never computed"));
  }
  graph_->output = computed->second;
  // Only the nodes the trained output depends on run (another output's
  // head, say, does not); shape arithmetic still folds for all of them.
  std::vector<bool> value_needed(graph_->names.size(), false);
  value_needed[graph_->output] = true;
  graph_->needed.assign(graph_->nodes.size(), false);
  for (size_t i = graph_->nodes.size(); i-- > 0;) {
    const OnnxNode& node = graph_->nodes[i];
    graph_->needed[i] = std::any_of(node.outputs.begin(), node.outputs.end(),
                                    [&](int out) { return out >= 0 && value_needed[out]; });
    if (!graph_->needed[i]) continue;
    for (int in : node.inputs) {
      if (in >= 0) value_needed[in] = true;
    }
    // A lookup reads its rows in place of its ids, which are computed
    // before it: those nodes are needed too.
    if (const LoadedGraph::Lookup* lookup = graph_->LookupAt(static_cast<int>(i))) {
      value_needed[lookup->ids] = true;
    }
  }
  // Initializers that only other outputs read are no variables of the job.
  std::vector<OnnxInitializer> trained;
  std::vector<int> parameters;
  std::vector<size_t> renumbered(initializers->size(), 0);
  for (size_t p = 0; p < initializers->size(); ++p) {
    if (!value_needed[graph_->parameters[p]]) continue;
    renumbered[p] = trained.size();
    trained.push_back(std::move((*initializers)[p]));
    parameters.push_back(graph_->parameters[p]);
  }
  if (trained.empty()) {
    return Refuse(origin_, absl::StrCat("output ", chosen,
                                        " depends on no float initializer: nothing to train"));
  }
  for (LoadedGraph::Lookup& lookup : graph_->lookups) {
    lookup.table = graph_->needed[lookup.node] ? renumbered[lookup.table] : LoadedGraph::kNoTable;
  }
  *initializers = std::move(trained);
  graph_->parameters = std::move(parameters);
  FindStatistics(*initializers);
  return absl::OkStatus();
}

}  // namespace

OnnxProgram::~OnnxProgram() = default;

const std::string& OnnxProgram::output_name() const { return graph_->names[graph_->output]; }

absl::StatusOr<std::unique_ptr<OnnxProgram>> OnnxProgram::Load(const std::string& path,
                                                               const std::string& output) {
  ASSIGN_OR_RETURN(const onnx::ModelProto model, ReadOnnxModel(path));
  return FromModel(model, path, Dirname(path), output);
}

absl::StatusOr<std::unique_ptr<OnnxProgram>> OnnxProgram::Parse(absl::string_view bytes,
                                                                const std::string& origin,
                                                                const std::string& output) {
  ASSIGN_OR_RETURN(const onnx::ModelProto model, ParseOnnxModel(bytes, origin));
  return FromModel(model, origin, /*data_folder=*/"", output);
}

absl::StatusOr<std::unique_ptr<OnnxProgram>> OnnxProgram::FromModel(const onnx::ModelProto& model,
                                                                    const std::string& origin,
                                                                    const std::string& data_folder,
                                                                    const std::string& output) {
  ASSIGN_OR_RETURN(const int64_t opset, CheckOpsets(model, origin));
  std::unique_ptr<OnnxProgram> program(new OnnxProgram());
  program->graph_ = std::make_unique<LoadedGraph>();
  program->graph_->opset = opset;
  GraphBuilder builder(origin, data_folder);
  RETURN_IF_ERROR(builder.Build(model.graph(), output, program->graph_.get(),
                                &program->initializers_, &program->inputs_));
  // Planning a batch of one checks every shape now, at load.
  absl::StatusOr<Plan*> plan = program->PlanFor(1);
  if (!plan.ok()) return Refuse(origin, std::string(plan.status().message()));
  const OnnxValue& trained = (*plan)->values[program->graph_->output];
  if (trained.is_int64 || trained.dims.empty() || trained.dims[0] != 1 || trained.dims.size() > 2) {
    return Refuse(origin, absl::StrCat("its output ", program->output_name(),
                                       " is not float32 [batch] or [batch, width]"));
  }
  if (trained.known) {
    return Refuse(origin, absl::StrCat("its output ", program->output_name(),
                                       " does not depend on its inputs"));
  }
  program->output_width_ = trained.dims.size() == 2 ? trained.dims[1] : 1;
  return program;
}

absl::StatusOr<OnnxProgram::Plan*> OnnxProgram::PlanFor(int64_t batch) {
  if (auto it = plans_.find(batch); it != plans_.end()) return it->second.get();
  auto plan = std::make_unique<Plan>();
  plan->batch = batch;
  plan->values = graph_->constants;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    OnnxValue& input = plan->values[graph_->inputs[i]];
    input.dims = {batch};
    input.dims.insert(input.dims.end(), inputs_[i].dims.begin(), inputs_[i].dims.end());
    if (OnnxElements(input.dims) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("a batch of ", batch, " values of input ",
                                                     inputs_[i].name, " is over ",
                                                     kMaxOnnxValueElements, " elements"));
    }
    // Ids are copied in; float inputs hold no floats of their own: each
    // pass borrows the caller's (OnnxValue::borrowed_values), as the
    // parameters do.
    if (inputs_[i].is_int64) input.ints.assign(input.num_elements(), 0);
  }
  const OnnxRunContext folding;
  for (size_t i = 0; i < graph_->nodes.size(); ++i) {
    const OnnxNode& node = graph_->nodes[i];
    if (const LoadedGraph::Lookup* lookup = graph_->LookupAt(static_cast<int>(i))) {
      OnnxValue& rows = plan->values[lookup->rows];
      rows.dims = plan->values[lookup->ids].dims;
      rows.ints.assign(rows.num_elements(), 0);
    }
    const bool constant = std::all_of(node.inputs.begin(), node.inputs.end(),
                                      [&](int in) { return in < 0 || plan->values[in].known; });
    if (absl::Status planned = graph_->kernels[i]->plan(node, plan->values); !planned.ok()) {
      // Ids where a node computes with them are the cause to name.
      if (!constant && graph_->needed[i]) RETURN_IF_ERROR(CheckIdsUse(i, plan->values));
      return planned;
    }
    for (int out : node.outputs) {
      if (out >= 0 && plan->values[out].oversized) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", node.name, " (", node.op, "): its output for a batch of ", batch,
                         " would have dims [", absl::StrJoin(plan->values[out].dims, ", "),
                         "], negative or over ", kMaxOnnxValueElements, " elements"));
      }
    }
    if (constant) {
      graph_->kernels[i]->forward(node, plan->values, folding);
      for (int out : node.outputs) {
        if (out >= 0) plan->values[out].known = true;
      }
      continue;
    }
    if (plan->values[node.outputs[0]].known || !graph_->needed[i]) continue;
    RETURN_IF_ERROR(CheckIdsUse(i, plan->values));
    (graph_->ids[node.outputs[0]] ? plan->id_steps : plan->steps).push_back(static_cast<int>(i));
  }
  Plan* result = plan.get();
  plans_[batch] = std::move(plan);
  return result;
}

absl::Status OnnxProgram::CheckIdsUse(size_t n, const std::vector<OnnxValue>& values) const {
  const OnnxNode& node = graph_->nodes[n];
  const bool selects = graph_->ids[node.outputs[0]];
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int in = node.inputs[i];
    if (in < 0 || !values[in].is_int64 || values[in].known || graph_->IsTableRows(in)) continue;
    if (selects && i == 0) continue;  // the ids it selects from
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", node.name, " (", node.op, "): ",
        selects
            ? absl::StrCat("selects ids by ", graph_->names[in],
                           ", which depends on the inputs; only constants can select ids")
            : absl::StrCat(
                  "computes with the ids of ", graph_->names[in],
                  "; pstrain reads ids only to gather the rows of an embedding "
                  "table (a Gather of an initializer by them), or to select some of "
                  "them (Gather by a constant, Squeeze, Unsqueeze, Reshape, Flatten, Identity)")));
  }
  return absl::OkStatus();
}

absl::StatusOr<OnnxProgram::Plan*> OnnxProgram::PlanWithInputs(
    int64_t batch, absl::Span<const OnnxInputData> inputs) {
  if (batch < 1) return absl::InvalidArgumentError("empty batch");
  if (inputs.size() != inputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph takes ", inputs_.size(), " inputs; given ", inputs.size()));
  }
  ASSIGN_OR_RETURN(Plan * plan, PlanFor(batch));
  for (size_t i = 0; i < inputs_.size(); ++i) {
    OnnxValue& value = plan->values[graph_->inputs[i]];
    if (inputs_[i].is_int64) {
      if (inputs[i].ids == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", inputs_[i].name, " takes int64 ids, not float values"));
      }
      std::copy_n(inputs[i].ids, value.ints.size(), value.ints.begin());
    } else {
      if (inputs[i].floats == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", inputs_[i].name, " takes float values, not ids"));
      }
      value.borrowed_values = inputs[i].floats;
    }
  }
  const OnnxRunContext context;
  for (int step : plan->id_steps) {
    graph_->kernels[step]->forward(graph_->nodes[step], plan->values, context);
  }
  return plan;
}

absl::StatusOr<const float*> OnnxProgram::Forward(const ParameterView& parameters, int64_t batch,
                                                  absl::Span<const OnnxInputData> inputs,
                                                  PassMode mode, uint64_t seed) {
  ASSIGN_OR_RETURN(Plan * plan, PlanWithInputs(batch, inputs));
  return Run(plan, parameters, mode, seed);
}

absl::StatusOr<const float*> OnnxProgram::Forward(const ParameterView& parameters, int64_t batch,
                                                  const float* input, PassMode mode,
                                                  uint64_t seed) {
  OnnxInputData data;
  data.floats = input;
  return Forward(parameters, batch, absl::MakeConstSpan(&data, 1), mode, seed);
}

absl::StatusOr<const float*> OnnxProgram::Forward(const ParameterView& parameters, int64_t batch,
                                                  absl::Span<const int64_t> ids, PassMode mode,
                                                  uint64_t seed) {
  if (inputs_.size() == 1 && inputs_[0].is_int64 && batch >= 1 &&
      static_cast<int64_t>(ids.size()) != batch * inputs_[0].width) {
    return absl::InvalidArgumentError(
        absl::StrCat("a batch of ", batch, " for input ", inputs_[0].name, " holds ",
                     batch * inputs_[0].width, " ids; given ", ids.size()));
  }
  OnnxInputData data;
  data.ids = ids.data();
  return Forward(parameters, batch, absl::MakeConstSpan(&data, 1), mode, seed);
}

absl::StatusOr<RowIds> OnnxProgram::TableIds(int64_t batch,
                                             absl::Span<const OnnxInputData> inputs) {
  ASSIGN_OR_RETURN(Plan * plan, PlanWithInputs(batch, inputs));
  RowIds rows;
  for (const LoadedGraph::Lookup& lookup : graph_->lookups) {
    if (lookup.table == LoadedGraph::kNoTable) continue;
    const std::vector<int64_t>& ids = plan->values[lookup.ids].ints;
    std::vector<int64_t>& table = rows[initializers_[lookup.table].name];
    table.insert(table.end(), ids.begin(), ids.end());
  }
  for (auto& [name, ids] : rows) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return rows;
}

absl::Status OnnxProgram::BindParameter(Plan& plan, size_t p,
                                        const ParameterView& parameters) const {
  const OnnxInitializer& init = initializers_[p];
  OnnxValue& value = plan.values[graph_->parameters[p]];
  if (!init.embedding_table) {
    ASSIGN_OR_RETURN(value.borrowed_values, parameters.Dense(init.name, Shape(init.dims)));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const EmbeddingRows* rows, parameters.Rows(init.name, init.dims[1]));
  value.borrowed_values = rows->values.data<float>();
  value.dims = {static_cast<int64_t>(rows->ids.size()), init.dims[1]};
  plan.row_of_id.clear();
  for (size_t r = 0; r < rows->ids.size(); ++r) plan.row_of_id[rows->ids[r]] = r;
  for (const LoadedGraph::Lookup& lookup : graph_->lookups) {
    if (lookup.table != p) continue;
    const std::vector<int64_t>& ids = plan.values[lookup.ids].ints;
    std::vector<int64_t>& at = plan.values[lookup.rows].ints;
    for (size_t i = 0; i < ids.size(); ++i) {
      auto row = plan.row_of_id.find(ids[i]);
      if (row == plan.row_of_id.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "id ", ids[i], " has no row among those given of embedding table ", init.name));
      }
      at[i] = row->second;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const float*> OnnxProgram::Run(Plan* plan, const ParameterView& parameters,
                                              PassMode mode, uint64_t seed) {
  for (size_t p = 0; p < initializers_.size(); ++p) {
    RETURN_IF_ERROR(BindParameter(*plan, p, parameters));
  }
  std::vector<OnnxValue>& values = plan->values;
  plan->random.seed(seed);
  OnnxRunContext context;
  context.mode = mode;
  context.random = &plan->random;
  for (int step : plan->steps) {
    graph_->kernels[step]->forward(graph_->nodes[step], values, context);
  }
  last_ = plan;
  return values[graph_->output].floats.data();
}

absl::Status OnnxProgram::Backward(const ParameterView& parameters, const float* d_output,
                                   Gradients* gradients) {
  if (last_ == nullptr) return absl::FailedPreconditionError("Backward before Forward");
  std::vector<OnnxValue>& values = last_->values;
  // Every computed float value and every parameter takes a gradient; the
  // input and the constants do not.
  for (int step : last_->steps) {
    for (int out : graph_->nodes[step].outputs) {
      if (out >= 0 && !values[out].is_int64) values[out].grad.assign(values[out].floats.size(), 0);
    }
  }
  // The parameters' gradients accumulate in the buffers they are returned
  // in; a table's, in the rows the Forward read (bound to them still). A
  // statistic takes none.
  for (size_t p = 0; p < initializers_.size(); ++p) {
    const OnnxInitializer& init = initializers_[p];
    OnnxValue& value = values[graph_->parameters[p]];
    if (!init.trainable) {
      ASSIGN_OR_RETURN(value.borrowed_values, parameters.Dense(init.name, Shape(init.dims)));
      continue;
    }
    if (init.embedding_table) {
      ASSIGN_OR_RETURN(const EmbeddingRows* rows, parameters.Rows(init.name, init.dims[1]));
      ASSIGN_OR_RETURN(value.borrowed_grad,
                       gradients->RowsBuffer(init.name, rows->ids, init.dims[1]));
    } else {
      ASSIGN_OR_RETURN(value.borrowed_values, parameters.Dense(init.name, Shape(init.dims)));
      ASSIGN_OR_RETURN(value.borrowed_grad, gradients->DenseBuffer(init.name, Shape(init.dims)));
    }
    std::fill_n(value.borrowed_grad, value.num_elements(), 0.0f);
  }
  OnnxValue& output = values[graph_->output];
  std::copy_n(d_output, output.grad.size(), output.grad.begin());
  for (auto step = last_->steps.rbegin(); step != last_->steps.rend(); ++step) {
    if (graph_->kernels[*step]->backward != nullptr) {
      graph_->kernels[*step]->backward(graph_->nodes[*step], values);
    }
  }
  // The buffers are the caller's until the next Backward.
  for (int index : graph_->parameters) values[index].borrowed_grad = nullptr;
  return absl::OkStatus();
}

std::string OnnxProgram::Describe(OnnxGraph& graph, const std::vector<std::string>& inputs) const {
  const LoadedGraph& loaded = *graph_;
  graph.RequireOpset(loaded.opset);
  std::vector<std::string> names(loaded.names.size());
  for (size_t p = 0; p < initializers_.size(); ++p) {
    if (!initializers_[p].embedding_table) {
      names[loaded.parameters[p]] = graph.Variable(initializers_[p].name);
    }
  }
  for (size_t i = 0; i < loaded.inputs.size() && i < inputs.size(); ++i) {
    names[loaded.inputs[i]] = inputs[i];
  }
  // Constants when first read: those only shape arithmetic reads stay out.
  auto name_of = [&](int index) -> std::string {
    if (!names[index].empty()) return names[index];
    const OnnxValue& constant = loaded.constants[index];
    names[index] = constant.is_int64 ? graph.Int64Constant(constant.dims, constant.ints)
                                     : graph.FloatConstant(constant.dims, constant.floats);
    return names[index];
  };
  for (size_t i = 0; i < loaded.nodes.size(); ++i) {
    if (!loaded.needed[i]) continue;
    const OnnxNode& node = loaded.nodes[i];
    // A table's Gather reads the rows the export holds of the ids.
    if (const LoadedGraph::Lookup* lookup = loaded.LookupAt(static_cast<int>(i))) {
      names[node.outputs[0]] =
          graph.EmbeddingRows(initializers_[lookup->table].name, name_of(lookup->ids));
      continue;
    }
    // An optional input left out before one given stays as "" (Pad's
    // constant_value before its axes); those left out last are dropped.
    std::vector<std::string> node_inputs;
    for (int in : node.inputs) node_inputs.push_back(in >= 0 ? name_of(in) : "");
    while (!node_inputs.empty() && node_inputs.back().empty()) node_inputs.pop_back();
    std::vector<OnnxAttribute> attributes;
    for (const auto& [key, value] : node.int_attributes) {
      attributes.push_back(OnnxAttribute::Int(key, value));
    }
    for (const auto& [key, value] : node.float_attributes) {
      attributes.push_back(OnnxAttribute::Float(key, value));
    }
    for (const auto& [key, value] : node.ints_attributes) {
      attributes.push_back(OnnxAttribute::Ints(key, value));
    }
    for (const auto& [key, value] : node.string_attributes) {
      attributes.push_back(OnnxAttribute::String(key, value));
    }
    if (node.op == "Dropout") {
      names[node.outputs[0]] = graph.Node("Identity", {node_inputs[0]});
    } else if (node.outputs.size() > 1) {
      const std::vector<std::string> outputs = graph.NodeOutputs(
          node.op, node_inputs, attributes, static_cast<int>(node.outputs.size()));
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (node.outputs[k] >= 0) names[node.outputs[k]] = outputs[k];
      }
    } else {
      names[node.outputs[0]] = graph.Node(node.op, node_inputs, attributes);
    }
  }
  return graph.Node("Reshape",
                    {name_of(loaded.output), graph.Int64Constant({2}, {-1, output_width_})});
}

}  // namespace pstrain
