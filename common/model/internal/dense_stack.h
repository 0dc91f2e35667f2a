#ifndef PSTRAIN_COMMON_MODEL_INTERNAL_DENSE_STACK_H_
#define PSTRAIN_COMMON_MODEL_INTERNAL_DENSE_STACK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/layers/activation_layer.h"
#include "common/model/layers/dropout.h"
#include "common/model/layers/inner_product.h"
#include "common/model/model.h"
#include "common/model/onnx_graph.h"

namespace pstrain {
namespace model_internal {

struct DenseStackConfig {
  // Prepended to every variable name ("deep/" gives "deep/hidden_0/weights").
  std::string prefix;
  int64_t input_dim = 0;
  // Hidden layers: inner product, activation, dropout. May be empty (a
  // linear model).
  std::vector<int64_t> hidden_units;
  ActivationKind activation = ActivationKind::kRelu;
  float dropout = 0;
  // The output layer: inner product without activation.
  int64_t output_dim = 1;
  // Name of the output layer's variables: "<prefix><output_name>/weights".
  std::string output_name = "logits";
};

// Fully connected layers ending in a linear output, the core of the MLP,
// the linear models, the CNN's head and wide-and-deep's deep part.
// Variables: <prefix>hidden_<i>/{weights [in, out], bias [out]} and
// <prefix><output_name>/{weights, bias}; weights Glorot-uniform, biases
// zero. Thread-compatible.
class DenseStack {
 public:
  DenseStack(ComputeContext* context, DenseStackConfig config, uint64_t seed);

  std::vector<VariableDef> Variables() const;

  // Computes the output [batch, output_dim] of `input` [batch, input_dim];
  // *output points into a buffer owned by the stack, valid until the next
  // call.
  absl::Status Forward(const ParameterView& parameters, int64_t batch, const float* input,
                       PassMode mode, const float** output);

  // Given d_output, writes the variables' gradients into *gradients and,
  // unless `d_input` is null, d_input [batch, input_dim]. Uses the
  // activations of the last Forward, which must have had the same input.
  absl::Status Backward(const ParameterView& parameters, int64_t batch, const float* input,
                        const float* d_output, float* d_input, Gradients* gradients);

  // The evaluation-mode Forward of `input` [batch, input_dim] in `graph`;
  // returns the output [batch, output_dim].
  std::string DescribeOnnx(OnnxGraph& graph, const std::string& input) const;

  const DenseStackConfig& config() const { return config_; }
  // Floating-point operations of one forward pass over `batch` examples.
  double ForwardFlops(int64_t batch) const;

 private:
  struct Layer {
    std::string weights_name, bias_name;
    Shape weights_shape, bias_shape;
    std::unique_ptr<InnerProduct> product;
    std::unique_ptr<ActivationLayer> activation;  // null for the output layer
    std::unique_ptr<Dropout> dropout;             // null without dropout
    // Per batch: pre-activation, activation output and (with dropout) the
    // dropped-out output that feeds the next layer.
    std::vector<float> pre, post, dropped;
    const float* output = nullptr;
  };

  const DenseStackConfig config_;
  const uint64_t seed_;
  std::vector<Layer> layers_;
  std::vector<float> grad_a_, grad_b_;  // ping-pong buffers for the backward pass
};

}  // namespace model_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_INTERNAL_DENSE_STACK_H_
