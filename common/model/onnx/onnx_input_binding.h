#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_INPUT_BINDING_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_INPUT_BINDING_H_

// Which part of a batch each input of an imported graph takes
// (OnnxModelSpec.inputs), and a batch's values for those inputs: the
// dense features, the sparse ids (all of an example's, or one field's),
// the ids' weights, or how many ids each example has.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "common/data/example_batch.h"
#include "common/model/onnx/onnx_program.h"
#include "protos/job.pb.h"

namespace pstrain {

struct OnnxInputBinding {
  enum class Part { kDense, kIds, kFieldIds, kIdWeights, kIdCounts };
  Part part = Part::kDense;
  int32_t field = 0;    // of kFieldIds
  bool padded = false;  // kIds: examples have up to the input's n ids, not exactly n
};

// "dense", "ids", "ids of field 3", "id_weights", "id_counts": for messages.
std::string OnnxInputPartName(const OnnxInputBinding& binding);

// What an input of `binding` holds, for the export's documentation of it:
// "the example's sparse ids, padded with its last id", ...
std::string OnnxInputMeaning(const OnnxInputBinding& binding);

// The binding of each of `inputs` (OnnxProgram::inputs), in order: as
// spec.inputs names them or, where the spec leaves them out, what the graph
// says (one float input: the dense features; one int64 input: the ids).
// InvalidArgument naming `spec.path()` and the input: a name the graph does
// not have or named twice, an input left out, a part of the other type
// (dense, id_weights and id_counts are float; ids are int64), several float
// or int64 inputs and no spec.inputs (listing them), and what does not fit
// the data: dense features of another width or none, no sparse ids, an ids
// input of another number of fields, a field beyond the data's, weights
// of another width than the ids input beside them or without one.
absl::StatusOr<std::vector<OnnxInputBinding>> BindOnnxInputs(
    const OnnxModelSpec& spec, const std::vector<OnnxGraphInput>& inputs, const DatasetInfo& info);

// A batch's values for bound inputs. Thread-compatible: it keeps each
// input's values between calls.
class OnnxBatchInputs {
 public:
  OnnxBatchInputs(std::vector<OnnxGraphInput> inputs, std::vector<OnnxInputBinding> bindings);

  // Whether some input takes the batch's sparse ids.
  bool takes_ids() const;

  // The values of `batch` for each input, in order: valid until the next
  // call, and while `batch` lives (the dense features are read in place).
  // InvalidArgument: the batch lacks a part an input takes (dense features
  // of its width, sparse ids), or an example has another number of ids
  // than a fixed-length input holds, more than a padded one holds, or
  // none for an input of one field.
  absl::StatusOr<std::vector<OnnxInputData>> Fill(const ExampleBatch& batch);

 private:
  // Ids and their weights for an input of `width` ids per example.
  absl::Status FillIds(const ExampleBatch& batch, const OnnxGraphInput& input,
                       std::vector<int64_t>& ids, std::vector<float>* weights) const;

  const std::vector<OnnxGraphInput> inputs_;
  const std::vector<OnnxInputBinding> bindings_;
  // By input: the values it is given, when not the batch's own.
  std::vector<std::vector<int64_t>> ids_;
  std::vector<std::vector<float>> floats_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_INPUT_BINDING_H_
