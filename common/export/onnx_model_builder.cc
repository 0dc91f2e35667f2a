#include "common/export/onnx_model_builder.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/export/export_manifest.h"
#include "common/onnx/onnx_external_data.h"

namespace pstrain {
namespace {

// The IR version of the ONNX release that introduced `opset`: 8 (ONNX
// 1.12, opset 17, and 1.13, opset 18) unless a later opset needs more.
int64_t IrVersionFor(int64_t opset) {
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
  return 8;
}
constexpr int64_t kMlOpset = 3;
constexpr int64_t kExternalAlignment = 4096;
constexpr char kBatch[] = "batch";

onnx::TypeProto TensorType(int32_t elem_type, const std::vector<std::string>& symbolic,
                           const std::vector<int64_t>& fixed) {
  onnx::TypeProto type;
  onnx::TypeProto_Tensor* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (size_t i = 0; i < symbolic.size(); ++i) {
    onnx::TensorShapeProto_Dimension* dim = tensor->mutable_shape()->add_dim();
    if (symbolic[i].empty()) {
      dim->set_dim_value(fixed[i]);
    } else {
      dim->set_dim_param(symbolic[i]);
    }
  }
  return type;
}

void SetAttribute(const OnnxAttribute& attribute, onnx::AttributeProto* proto) {
  proto->set_name(attribute.name);
  switch (attribute.type) {
    case OnnxAttribute::Type::kInt:
      proto->set_type(onnx::AttributeProto::INT);
      proto->set_i(attribute.int_value);
      return;
    case OnnxAttribute::Type::kFloat:
      proto->set_type(onnx::AttributeProto::FLOAT);
      proto->set_f(attribute.float_value);
      return;
    case OnnxAttribute::Type::kInts:
      proto->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : attribute.int_values) proto->add_ints(v);
      return;
    case OnnxAttribute::Type::kString:
      proto->set_type(onnx::AttributeProto::STRING);
      proto->set_s(attribute.string_value);
      return;
  }
}

std::string KindName(PredictionKind kind) {
  switch (kind) {
    case PredictionKind::kClassProbabilities:
      return "class_probabilities";
    case PredictionKind::kBinaryProbability:
      return "binary_probability";
    case PredictionKind::kRegression:
      return "regression";
  }
  return "unknown";
}

void AddMetadata(const std::string& key, const std::string& value, onnx::ModelProto* model) {
  onnx::StringStringEntryProto* entry = model->add_metadata_props();
  entry->set_key(key);
  entry->set_value(value);
}

}  // namespace

void OnnxModelBuilder::Fail(const std::string& message) {
  if (status_.ok()) status_ = absl::FailedPreconditionError(message);
}

std::string OnnxModelBuilder::FreshName(const std::string& base) {
  std::string name;
  do {
    name = absl::StrCat(base, "_", next_name_++);
  } while (values_.contains(name));
  return name;
}

bool OnnxModelBuilder::Declare(const std::string& name) {
  if (values_.insert(name).second) return true;
  Fail(absl::StrCat("the ONNX graph names two values \"", name, "\""));
  return false;
}

bool OnnxModelBuilder::Known(const std::string& name, const std::string& reader) {
  if (values_.contains(name)) return true;
  Fail(absl::StrCat(reader, " reads \"", name, "\", which the ONNX graph does not hold"));
  return false;
}

void OnnxModelBuilder::AddInput(const std::string& name, int32_t elem_type,
                                const std::string& second_dim, int64_t width,
                                const std::string& doc) {
  if (!Declare(name)) return;
  onnx::ValueInfoProto* input = graph_.add_input();
  input->set_name(name);
  input->set_doc_string(doc);
  *input->mutable_type() = TensorType(elem_type, {kBatch, second_dim}, {0, width});
}

std::string OnnxModelBuilder::Input(const std::string& name, bool is_int64,
                                    const std::vector<int64_t>& dims, const std::string& meaning) {
  if (!Declare(name)) return name;
  std::vector<std::string> symbolic = {kBatch};
  std::vector<int64_t> fixed = {0};
  for (int64_t d : dims) {
    symbolic.emplace_back();
    fixed.push_back(d);
  }
  onnx::ValueInfoProto* input = graph_.add_input();
  input->set_name(name);
  input->set_doc_string(absl::StrCat(is_int64 ? "int64" : "float32", " [batch",
                                     dims.empty() ? "" : ", ", absl::StrJoin(dims, ", "),
                                     "]: ", meaning));
  *input->mutable_type() = TensorType(
      is_int64 ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT, symbolic, fixed);
  return name;
}

void OnnxModelBuilder::SetDenseFeatures(const OnnxModelInfo& info) {
  dense_names_ = info.dense_names;
  dense_fill_ = info.dense_fill;
  dense_mean_ = info.dense_mean;
  dense_scale_ = info.dense_scale;
}

std::string OnnxModelBuilder::DenseInput(int64_t width) {
  constexpr char kName[] = "dense";
  if (dense_width_ >= 0) {
    if (dense_width_ != width) {
      Fail(absl::StrCat("the dense input is declared ", dense_width_, " and ", width, " wide"));
    }
    return dense_value_;
  }
  dense_width_ = width;
  const bool named = static_cast<int64_t>(dense_names_.size()) == width;
  const bool fills =
      static_cast<int64_t>(dense_fill_.size()) == width &&
      std::any_of(dense_fill_.begin(), dense_fill_.end(), [](float v) { return !std::isnan(v); });
  std::string meaning = absl::StrCat(
      "float32 [batch, ", width,
      "]: each example's dense features as pstrain reads them: CSV columns as they are",
      named ? absl::StrCat(" (", absl::StrJoin(dense_names_, ", "), ")") : "",
      fills ? ", a missing value as NaN" : "",
      "; an image's pixels in height-width-channel order, each byte scaled to [0, 1]");
  AddInput(kName, onnx::TensorProto::FLOAT, "", width, meaning);
  dense_value_ = kName;
  if (fills) {
    // NaN -> the fill the training data's reader gave; a feature without
    // one keeps its NaN (pstrain's reader refuses such a line).
    const std::string missing = Node("IsNaN", {kName}, {});
    const std::string fill = FloatConstant({1, width}, dense_fill_);
    dense_value_ = Node("Where", {missing, fill, kName}, {});
  }
  if (static_cast<int64_t>(dense_mean_.size()) == width &&
      static_cast<int64_t>(dense_scale_.size()) == width) {
    const std::string centred =
        Node("Sub", {dense_value_, FloatConstant({1, width}, dense_mean_)}, {});
    dense_value_ = Node("Mul", {centred, FloatConstant({1, width}, dense_scale_)}, {});
  }
  return dense_value_;
}

OnnxSparseInput OnnxModelBuilder::SparseInput(int64_t ids_per_example) {
  OnnxSparseInput input{"sparse_ids", "sparse_values"};
  if (sparse_width_ >= 0) {
    if (sparse_width_ != ids_per_example) {
      Fail("the sparse inputs are declared with two widths");
    }
    return input;
  }
  sparse_width_ = ids_per_example;
  const std::string free_width = ids_per_example > 0 ? "" : "ids_per_example";
  const std::string layout =
      ids_per_example > 0
          ? absl::StrCat("exactly ", ids_per_example, " per example, one per field, in field order")
          : "as many per example as its longest example has; shorter examples are padded with "
            "entries of value 0 (any id, e.g. 0), which add nothing";
  AddInput(input.ids, onnx::TensorProto::INT64, free_width, ids_per_example,
           absl::StrCat("int64 [batch, n]: each example's sparse feature ids (any 64-bit id for "
                        "a dynamic table; an id the model never trained reads a zero "
                        "embedding), ",
                        layout));
  AddInput(input.values, onnx::TensorProto::FLOAT, free_width, ids_per_example,
           "float32 [batch, n]: the value of each id in sparse_ids (1 for a plain categorical "
           "id; 0 in padding)");
  return input;
}

char* OnnxModelBuilder::Own(int64_t bytes) {
  owned_.emplace_back(static_cast<size_t>(bytes));
  return owned_.back().data();
}

std::string OnnxModelBuilder::AddTensor(const std::string& name, std::vector<int64_t> dims,
                                        int32_t elem_type, const char* data, int64_t bytes) {
  if (!Declare(name)) return name;
  tensors_.push_back(PendingTensor{name, std::move(dims), elem_type, data, bytes});
  return name;
}

std::string OnnxModelBuilder::Variable(const std::string& name) {
  if (auto it = variables_.find(name); it != variables_.end()) return it->second;
  const Tensor* value = parameters_.dense(name);
  if (value == nullptr) {
    Fail(absl::StrCat("the model's ONNX graph reads variable ", name,
                      ", which is not one of its dense variables"));
    return name;
  }
  const std::vector<int64_t> dims(value->shape().dims().begin(), value->shape().dims().end());
  variables_[name] =
      AddTensor(name, dims, onnx::TensorProto::FLOAT, static_cast<const char*>(value->raw_data()),
                static_cast<int64_t>(value->num_bytes()));
  return name;
}

const OnnxModelBuilder::TableTensor* OnnxModelBuilder::Table(const std::string& table) {
  if (auto it = tables_.find(table); it != tables_.end()) return &it->second;
  const EmbeddingTableValues* values = parameters_.table(table);
  if (values == nullptr) {
    Fail(absl::StrCat("the model's ONNX graph reads table ", table,
                      ", which is not one of its embedding tables"));
    return nullptr;
  }
  TableTensor tensor;
  tensor.dynamic = values->vocabulary() == 0;
  const int64_t dim = values->dim();
  int64_t rows = values->vocabulary();
  if (tensor.dynamic) {
    tensor.keys = values->SortedIds();
    rows = static_cast<int64_t>(tensor.keys.size()) + 1;  // the zero row last
  }
  float* data = reinterpret_cast<float*>(Own(rows * dim * static_cast<int64_t>(sizeof(float))));
  for (int64_t r = 0; r < rows; ++r) {
    const absl::Span<float> row(data + r * dim, dim);
    if (!tensor.dynamic) {
      const float* stored = values->Find(r);
      if (stored != nullptr) {
        std::copy_n(stored, dim, row.data());
      } else {
        values->initial().FillRow(r, row);
      }
    } else if (r < rows - 1) {
      std::copy_n(values->Find(tensor.keys[r]), dim, row.data());
    } else {
      std::fill(row.begin(), row.end(), 0.0f);
    }
  }
  tensor.initializer =
      AddTensor(table, {rows, dim}, onnx::TensorProto::FLOAT, reinterpret_cast<const char*>(data),
                rows * dim * static_cast<int64_t>(sizeof(float)));
  return &tables_.emplace(table, std::move(tensor)).first->second;
}

std::string OnnxModelBuilder::EmbeddingRows(const std::string& table, const std::string& ids) {
  const std::string key = absl::StrCat(table, "\n", ids);
  if (auto it = lookups_.find(key); it != lookups_.end()) return it->second;
  const TableTensor* tensor = Table(table);
  if (tensor == nullptr || !Known(ids, absl::StrCat("the lookup in table ", table))) return table;
  std::string rows = ids;
  if (tensor->dynamic) {
    uses_ml_ = true;
    rows = FreshName(table + "/row");
    Declare(rows);
    onnx::NodeProto* node = graph_.add_node();
    node->set_op_type("LabelEncoder");
    node->set_domain("ai.onnx.ml");
    node->set_name(rows);
    node->add_input(ids);
    node->add_output(rows);
    std::vector<int64_t> row_numbers(tensor->keys.size());
    std::iota(row_numbers.begin(), row_numbers.end(), 0);
    SetAttribute(OnnxAttribute::Ints("keys_int64s", tensor->keys), node->add_attribute());
    SetAttribute(OnnxAttribute::Ints("values_int64s", std::move(row_numbers)),
                 node->add_attribute());
    SetAttribute(OnnxAttribute::Int("default_int64", static_cast<int64_t>(tensor->keys.size())),
                 node->add_attribute());
  }
  const std::string result = Node("Gather", {tensor->initializer, rows}, {});
  lookups_[key] = result;
  return result;
}

std::string OnnxModelBuilder::FloatConstant(std::vector<int64_t> dims, std::vector<float> values) {
  const int64_t bytes = static_cast<int64_t>(values.size() * sizeof(float));
  char* data = Own(bytes);
  std::memcpy(data, values.data(), bytes);
  return AddTensor(FreshName("constant"), std::move(dims), onnx::TensorProto::FLOAT, data, bytes);
}

std::string OnnxModelBuilder::Int64Constant(std::vector<int64_t> dims,
                                            std::vector<int64_t> values) {
  const int64_t bytes = static_cast<int64_t>(values.size() * sizeof(int64_t));
  char* data = Own(bytes);
  std::memcpy(data, values.data(), bytes);
  return AddTensor(FreshName("constant"), std::move(dims), onnx::TensorProto::INT64, data, bytes);
}

std::string OnnxModelBuilder::Node(const std::string& op, const std::vector<std::string>& inputs,
                                   const std::vector<OnnxAttribute>& attributes) {
  return NodeOutputs(op, inputs, attributes, 1).front();
}

std::vector<std::string> OnnxModelBuilder::NodeOutputs(const std::string& op,
                                                       const std::vector<std::string>& inputs,
                                                       const std::vector<OnnxAttribute>& attributes,
                                                       int outputs) {
  std::vector<std::string> names;  // the node is named after the first
  for (int i = 0; i < outputs; ++i) names.push_back(FreshName(op));
  for (const std::string& input : inputs) {
    if (!input.empty()) Known(input, absl::StrCat("node ", names[0]));  // "": left out
  }
  onnx::NodeProto* node = graph_.add_node();
  node->set_op_type(op);
  node->set_name(names[0]);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& name : names) {
    Declare(name);
    node->add_output(name);
  }
  for (const OnnxAttribute& attribute : attributes) SetAttribute(attribute, node->add_attribute());
  return names;
}

void OnnxModelBuilder::RequireOpset(int64_t opset) { opset_ = std::max(opset_, opset); }

void OnnxModelBuilder::Output(const std::string& name, const std::string& value, int64_t width,
                              const std::string& meaning) {
  if (!Known(value, absl::StrCat("output ", name)) || !Declare(name)) return;
  onnx::NodeProto* node = graph_.add_node();
  node->set_op_type("Identity");
  node->set_name(name);
  node->add_input(value);
  node->add_output(name);
  onnx::ValueInfoProto* output = graph_.add_output();
  output->set_name(name);
  output->set_doc_string(absl::StrCat("float32 [batch, ", width, "]: ", meaning));
  *output->mutable_type() = TensorType(onnx::TensorProto::FLOAT, {kBatch, ""}, {0, width});
  output_widths_[name] = width;
}

absl::StatusOr<BuiltOnnxModel> OnnxModelBuilder::Finish(const OnnxModelInfo& info,
                                                        int64_t max_inline_bytes) {
  if (!status_.ok()) return status_;
  auto predictions = output_widths_.find("predictions");
  if (predictions == output_widths_.end() || predictions->second != info.prediction_width) {
    return absl::FailedPreconditionError(absl::StrCat("the ONNX graph of model ", info.model_name,
                                                      " has no output \"predictions\" [batch, ",
                                                      info.prediction_width, "]"));
  }
  BuiltOnnxModel built;
  onnx::ModelProto& model = built.proto;
  model.set_ir_version(IrVersionFor(opset_));
  model.set_producer_name("pstrain");
  model.set_model_version(info.global_step);
  model.set_doc_string(absl::StrCat(
      "pstrain model ", info.model_name, " of job ", info.job_id, " at step ", info.global_step,
      ". Inputs and outputs have a dynamic batch dimension; their doc strings say what each "
      "holds."));
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(opset_);
  if (uses_ml_) {
    opset = model.add_opset_import();
    opset->set_domain("ai.onnx.ml");
    opset->set_version(kMlOpset);
  }
  AddMetadata("pstrain.model", info.model_name, &model);
  AddMetadata("pstrain.job_id", info.job_id, &model);
  AddMetadata("pstrain.global_step", absl::StrCat(info.global_step), &model);
  AddMetadata("pstrain.prediction_kind", KindName(info.prediction_kind), &model);
  model.mutable_graph()->Swap(&graph_);
  model.mutable_graph()->set_name(info.model_name);

  // Largest weights outside first, until what stays inside fits.
  std::vector<const PendingTensor*> order;
  int64_t inline_bytes = 0;
  for (const PendingTensor& tensor : tensors_) {
    order.push_back(&tensor);
    inline_bytes += tensor.bytes;
  }
  std::stable_sort(order.begin(), order.end(), [](const PendingTensor* a, const PendingTensor* b) {
    return a->bytes > b->bytes;
  });
  absl::flat_hash_set<const PendingTensor*> outside;
  int64_t offset = 0;
  for (const PendingTensor* tensor : order) {
    if (inline_bytes <= max_inline_bytes) break;
    outside.insert(tensor);
    inline_bytes -= tensor->bytes;
  }
  for (const PendingTensor& tensor : tensors_) {
    onnx::TensorProto* proto = model.mutable_graph()->add_initializer();
    proto->set_name(tensor.name);
    proto->set_data_type(tensor.elem_type);
    for (int64_t d : tensor.dims) proto->add_dims(d);
    if (!outside.contains(&tensor)) {
      proto->set_raw_data(tensor.data, tensor.bytes);
      continue;
    }
    offset = (offset + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
    SetOnnxExternalLocation({std::string(kExportOnnxDataFileName), offset, tensor.bytes}, proto);
    built.external.push_back(OnnxExternalPiece{tensor.data, tensor.bytes, offset});
    offset += tensor.bytes;
  }
  const size_t proto_bytes = model.ByteSizeLong();
  if (proto_bytes > static_cast<size_t>(INT_MAX)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ONNX graph of model ", info.model_name, " takes ", proto_bytes,
        " bytes without its external weights, over protobuf's 2 GB limit (the id maps of "
        "dynamic tables, ",
        absl::StrJoin(tables_, ", ",
                      [](std::string* out, const auto& entry) {
                        absl::StrAppend(out, entry.first, ": ", entry.second.keys.size(), " ids");
                      }),
        ", are node attributes and stay inside)"));
  }
  return built;
}

}  // namespace pstrain
