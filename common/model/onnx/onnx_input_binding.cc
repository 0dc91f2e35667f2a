#include "common/model/onnx/onnx_input_binding.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/model/builtin/dense_input.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

using Part = OnnxInputBinding::Part;

std::string Describe(const OnnxGraphInput& input) {
  return absl::StrCat(input.name, " (", input.is_int64 ? "int64" : "float", " [batch",
                      input.dims.empty() ? "" : ", ", absl::StrJoin(input.dims, ", "), "])");
}

bool TakesFloats(Part part) { return part != Part::kIds && part != Part::kFieldIds; }

// The part spec.inputs names for input `i` of the graph.
absl::StatusOr<OnnxInputBinding> PartOf(const OnnxInput& named, const std::string& field) {
  OnnxInputBinding binding;
  switch (named.part_case()) {
    case OnnxInput::kDense:
      binding.part = Part::kDense;
      break;
    case OnnxInput::kIds:
      if (named.ids().has_field()) {
        if (named.ids().field() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(field, ".ids.field is ", named.ids().field(), "; fields count from 0"));
        }
        binding.part = Part::kFieldIds;
        binding.field = named.ids().field();
      } else {
        binding.part = Part::kIds;
      }
      break;
    case OnnxInput::kIdWeights:
      binding.part = Part::kIdWeights;
      break;
    case OnnxInput::kIdCounts:
      binding.part = Part::kIdCounts;
      break;
    case OnnxInput::PART_NOT_SET:
      return absl::InvalidArgumentError(absl::StrCat(
          field, " names no part of the batch: set one of dense, ids, id_weights, id_counts"));
  }
  return binding;
}

// The bindings spec.inputs names, in the graph's order.
absl::StatusOr<std::vector<OnnxInputBinding>> NamedBindings(
    const OnnxModelSpec& spec, const std::vector<OnnxGraphInput>& inputs) {
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<std::string> described;
  for (size_t i = 0; i < inputs.size(); ++i) {
    index[inputs[i].name] = i;
    described.push_back(Describe(inputs[i]));
  }
  std::vector<OnnxInputBinding> bindings(inputs.size());
  std::vector<bool> bound(inputs.size(), false);
  for (int n = 0; n < spec.inputs_size(); ++n) {
    const OnnxInput& named = spec.inputs(n);
    const std::string field = absl::StrCat("model.onnx.inputs[", n, "]");
    auto found = index.find(named.name());
    if (found == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", spec.path(), " has no input \"", named.name(),
                       "\"; its inputs: ", absl::StrJoin(described, ", ")));
    }
    if (bound[found->second]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " names input ", named.name(), " a second time"));
    }
    ASSIGN_OR_RETURN(bindings[found->second], PartOf(named, field));
    bound[found->second] = true;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!bound[i]) {
      return absl::InvalidArgumentError(absl::StrCat("model.onnx.inputs leaves out input ",
                                                     Describe(inputs[i]), " of ", spec.path(),
                                                     ": name the part of the batch it takes"));
    }
  }
  return bindings;
}

// One float input takes the dense features and one int64 input the ids.
absl::StatusOr<std::vector<OnnxInputBinding>> InferredBindings(
    const OnnxModelSpec& spec, const std::vector<OnnxGraphInput>& inputs) {
  std::vector<OnnxInputBinding> bindings(inputs.size());
  int floats = 0, ids = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bindings[i].part = inputs[i].is_int64 ? Part::kIds : Part::kDense;
    (inputs[i].is_int64 ? ids : floats) += 1;
  }
  if (floats > 1 || ids > 1) {
    std::vector<std::string> described;
    for (const OnnxGraphInput& input : inputs) described.push_back(Describe(input));
    return absl::InvalidArgumentError(absl::StrCat(
        spec.path(), " has inputs ", absl::StrJoin(described, ", "),
        ": name the part of the batch each takes in model.onnx.inputs (dense, ids, ids with a "
        "field, id_weights, id_counts)"));
  }
  return bindings;
}

// Whether the data gives input `input` what its binding says.
absl::Status CheckFits(const std::string& path, const OnnxGraphInput& input,
                       OnnxInputBinding& binding, const std::vector<OnnxGraphInput>& inputs,
                       const std::vector<OnnxInputBinding>& bindings, const DatasetInfo& info) {
  const std::string takes = absl::StrCat(path, ": input ", input.name, " takes ");
  if (TakesFloats(binding.part) == input.is_int64) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": input ", Describe(input), " cannot take ", OnnxInputPartName(binding),
                     ", which ", TakesFloats(binding.part) ? "is float" : "are int64 ids"));
  }
  if (binding.part != Part::kDense && info.sparse_dim == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(takes, input.is_int64 ? "int64 ids" : OnnxInputPartName(binding),
                     "; the training data has no sparse ids"));
  }
  switch (binding.part) {
    case Part::kDense:
      if (info.dense_dim == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(takes, "float features; the training data has ",
                         info.sparse_dim > 0 ? "only sparse ids (a graph over ids takes int64 "
                                               "[batch, fields])"
                                             : "no dense features"));
      }
      if (input.width != info.dense_dim) {
        return absl::InvalidArgumentError(absl::StrCat(
            takes, input.width, " features per example; the training data has ", info.dense_dim));
      }
      return absl::OkStatus();
    case Part::kIds:
      binding.padded = info.num_fields == 0;
      if (!binding.padded && input.width != info.num_fields) {
        return absl::InvalidArgumentError(absl::StrCat(
            takes, input.width, " ids per example (one per field); the training data has ",
            info.num_fields));
      }
      return absl::OkStatus();
    case Part::kFieldIds:
      if (input.width != 1) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": input ", Describe(input),
                                                       " takes the id of field ", binding.field,
                                                       ", one per example: [batch] or [batch, 1]"));
      }
      if (binding.field >= info.num_fields) {
        return absl::InvalidArgumentError(absl::StrCat(
            takes, "the id of field ", binding.field, "; the training data has ",
            info.num_fields == 0
                ? "a varying number of ids per example, not fields"
                : absl::StrCat(info.num_fields, " fields (0 to ", info.num_fields - 1, ")")));
      }
      return absl::OkStatus();
    case Part::kIdWeights: {
      std::vector<const OnnxGraphInput*> ids;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (bindings[i].part == Part::kIds) ids.push_back(&inputs[i]);
      }
      if (ids.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(takes, "the weights of the ids input beside it; the graph has ",
                         ids.size(), " inputs of every id (ids without a field)"));
      }
      if (ids[0]->width != input.width) {
        return absl::InvalidArgumentError(absl::StrCat(takes, input.width,
                                                       " id weights per example; its ids input ",
                                                       ids[0]->name, " holds ", ids[0]->width));
      }
      return absl::OkStatus();
    }
    case Part::kIdCounts:
      if (input.width != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": input ", Describe(input),
                         " takes id counts, one per example: [batch] or "
                         "[batch, 1]"));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

std::string OnnxInputPartName(const OnnxInputBinding& binding) {
  switch (binding.part) {
    case Part::kDense:
      return "dense";
    case Part::kIds:
      return "ids";
    case Part::kFieldIds:
      return absl::StrCat("ids of field ", binding.field);
    case Part::kIdWeights:
      return "id_weights";
    case Part::kIdCounts:
      return "id_counts";
  }
  return "?";
}

std::string OnnxInputMeaning(const OnnxInputBinding& binding) {
  switch (binding.part) {
    case Part::kDense:
      return "the example's dense features, in the training data's order";
    case Part::kIds:
      return binding.padded ? "the example's sparse ids; an example with fewer repeats its last "
                              "id, with weight 0"
                            : "the example's sparse ids, one per field";
    case Part::kFieldIds:
      return absl::StrCat("the id of the example's field ", binding.field, " (0-based)");
    case Part::kIdWeights:
      return "each id's value (1 when the data has none); 0 where the ids are padded";
    case Part::kIdCounts:
      return "how many ids the example has";
  }
  return "";
}

absl::StatusOr<std::vector<OnnxInputBinding>> BindOnnxInputs(
    const OnnxModelSpec& spec, const std::vector<OnnxGraphInput>& inputs, const DatasetInfo& info) {
  ASSIGN_OR_RETURN(std::vector<OnnxInputBinding> bindings, spec.inputs_size() > 0
                                                               ? NamedBindings(spec, inputs)
                                                               : InferredBindings(spec, inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(CheckFits(spec.path(), inputs[i], bindings[i], inputs, bindings, info));
  }
  return bindings;
}

OnnxBatchInputs::OnnxBatchInputs(std::vector<OnnxGraphInput> inputs,
                                 std::vector<OnnxInputBinding> bindings)
    : inputs_(std::move(inputs)),
      bindings_(std::move(bindings)),
      ids_(inputs_.size()),
      floats_(inputs_.size()) {}

bool OnnxBatchInputs::takes_ids() const {
  return std::any_of(bindings_.begin(), bindings_.end(),
                     [](const OnnxInputBinding& b) { return b.part != Part::kDense; });
}

absl::Status OnnxBatchInputs::FillIds(const ExampleBatch& batch, const OnnxGraphInput& input,
                                      std::vector<int64_t>& ids,
                                      std::vector<float>* weights) const {
  const int64_t n = input.width;
  const bool padded = std::any_of(bindings_.begin(), bindings_.end(),
                                  [](const auto& b) { return b.part == Part::kIds && b.padded; });
  ids.assign(batch.size * n, 0);
  if (weights != nullptr) weights->assign(batch.size * n, 0.0f);
  for (int64_t e = 0; e < batch.size; ++e) {
    const int64_t begin = batch.row_splits[e], count = batch.row_splits[e + 1] - begin;
    if (count > n || (!padded && count != n)) {
      return absl::InvalidArgumentError(absl::StrCat("example ", e, " has ", count, " ids; input ",
                                                     input.name, " takes ",
                                                     padded ? "at most " : "one per field, ", n));
    }
    for (int64_t j = 0; j < n; ++j) {
      // A padded entry repeats the example's last id (or is 0 when it has
      // none): it names no row the example does not read anyway.
      const bool real = j < count;
      const int64_t at = begin + (real ? j : count - 1);
      ids[e * n + j] = count == 0 ? 0 : batch.sparse_ids[at];
      if (weights != nullptr && real) {
        (*weights)[e * n + j] = batch.sparse_values.empty() ? 1.0f : batch.sparse_values[at];
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OnnxInputData>> OnnxBatchInputs::Fill(const ExampleBatch& batch) {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (takes_ids() && static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError("the batch has no sparse ids, which the graph's inputs take");
  }
  std::vector<OnnxInputData> data(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const OnnxGraphInput& input = inputs_[i];
    switch (bindings_[i].part) {
      case Part::kDense: {
        ASSIGN_OR_RETURN(data[i].floats, DenseInput(batch, input.width));
        break;
      }
      case Part::kIds:
        RETURN_IF_ERROR(FillIds(batch, input, ids_[i], nullptr));
        data[i].ids = ids_[i].data();
        break;
      case Part::kFieldIds: {
        const int32_t field = bindings_[i].field;
        ids_[i].resize(batch.size);
        for (int64_t e = 0; e < batch.size; ++e) {
          const int64_t begin = batch.row_splits[e], count = batch.row_splits[e + 1] - begin;
          if (count <= field) {
            return absl::InvalidArgumentError(absl::StrCat("example ", e, " has ", count,
                                                           " ids; input ", input.name,
                                                           " takes the id of field ", field));
          }
          ids_[i][e] = batch.sparse_ids[begin + field];
        }
        data[i].ids = ids_[i].data();
        break;
      }
      case Part::kIdWeights: {
        std::vector<int64_t> unused;
        RETURN_IF_ERROR(FillIds(batch, input, unused, &floats_[i]));
        data[i].floats = floats_[i].data();
        break;
      }
      case Part::kIdCounts:
        floats_[i].resize(batch.size);
        for (int64_t e = 0; e < batch.size; ++e) {
          floats_[i][e] = static_cast<float>(batch.row_splits[e + 1] - batch.row_splits[e]);
        }
        data[i].floats = floats_[i].data();
        break;
    }
  }
  return data;
}

}  // namespace pstrain
