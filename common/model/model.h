#ifndef PSTRAIN_COMMON_MODEL_MODEL_H_
#define PSTRAIN_COMMON_MODEL_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/config/pass_mode.h"
#include "common/data/example_batch.h"
#include "common/model/onnx_graph.h"
#include "common/model/parameters.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// One variable a model declares. `spec` carries the name, dense or
// embedding kind, float32 dtype, shape and initializer (and, for tables, the
// embedding options). A trainable variable gets the optimizer's slots
// (momentum, Adam's moments, ...): shaped like the variable when dense, per
// row when an embedding table, updated only for the rows a gradient names.
// A variable that is not trainable has no slots and no optimizer updates.
struct VariableDef {
  VariableSpec spec;
  bool trainable = true;
};

class ComputeContext;

// What a model is built with.
struct ModelContext {
  // The compute thread's oneDNN context; borrowed, must outlive the model.
  ComputeContext* compute = nullptr;
  // Seeds variable initialisers and dropout masks.
  uint64_t seed = 0;
};

// What a model's predictions mean, for metrics and export.
enum class PredictionKind {
  kClassProbabilities,  // [batch, num_classes], rows sum to 1
  kBinaryProbability,   // [batch, 1]: P(label = 1)
  kRegression,          // [batch, 1]: the predicted value
};

// The result of a forward pass over one batch.
struct ModelOutput {
  double loss = 0;                    // mean over the batch
  std::vector<float> example_losses;  // [batch]
  std::vector<float> predictions;     // [batch, prediction_width()]
};

// A trainable model: it declares its variables and, given their values and a
// batch, computes loss, predictions and gradients. Parameters are passed in
// on every call rather than held, so the same model runs against the
// single-process trainer's variables or what a worker pulled from the
// parameter servers.
//
// Implementations keep per-shape primitives and activation buffers between
// calls, so a Model is thread-compatible, not thread-safe: each compute
// thread uses its own.
class Model {
 public:
  virtual ~Model() = default;

  // "mlp", "cnn", ...: for logs.
  virtual std::string name() const = 0;

  // Every variable, in a fixed order. Names are unique.
  virtual std::vector<VariableDef> Variables() const = 0;

  virtual PredictionKind prediction_kind() const = 0;
  // Predictions per example: the number of classes, or 1.
  virtual int64_t prediction_width() const = 0;

  // The unique ids of each embedding table that a pass over `batch` reads;
  // empty for a model without tables. InvalidArgument: the batch lacks the
  // sparse features the model needs, or an id is out of range.
  virtual absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const { return RowIds(); }

  // Fills *output for `batch`. InvalidArgument: a missing or misshapen
  // parameter, or a batch that does not fit the model (feature width,
  // labels outside the classes).
  virtual absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch,
                               PassMode mode, ModelOutput* output) = 0;

  // A training-mode Forward, then the gradient of the mean loss with respect
  // to every trainable variable into *gradients (embedding tables as the
  // rows RowsToRead named). Errors as Forward.
  virtual absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                        ModelOutput* output, Gradients* gradients) = 0;

  // Describes the evaluation-mode Forward (no dropout, no loss), from the
  // batch's features to its predictions, through `graph`: the ONNX file
  // every export writes (common/model/onnx_graph.h). Unimplemented, the
  // default: the model has no such description, and its exports hold no
  // ONNX file.
  virtual absl::Status DescribeOnnx(OnnxGraph& graph) const {
    return absl::UnimplementedError(
        absl::StrCat("model ", name(), " does not describe an ONNX graph (Model::DescribeOnnx)"));
  }
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_MODEL_H_
