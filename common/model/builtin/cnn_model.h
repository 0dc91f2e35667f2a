#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_CNN_MODEL_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_CNN_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/internal/dense_stack.h"
#include "common/model/internal/loss_head.h"
#include "common/model/layers/activation_layer.h"
#include "common/model/layers/convolution.h"
#include "common/model/layers/pooling.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

struct CnnImage {
  int64_t height = 28;
  int64_t width = 28;
  int64_t channels = 1;
};

// A small convolutional classifier for images given as dense features in
// height-width-channel order:
//   conv(k x k, conv1_filters, "same") - ReLU - maxpool(2)
//   - conv(k x k, conv2_filters, "same") - ReLU - maxpool(2)
//   - dense(dense_units) - ReLU - dropout - dense(classes) - softmax.
// Variables: conv1/{kernel [k, k, c, f1], bias}, conv2/{kernel, bias},
// hidden_0/{weights, bias}, logits/{weights, bias}.
class CnnModel : public Model {
 public:
  // `spec` filled (FillModelDefaults), with num_classes resolved, and valid
  // (ValidateModelSpec): CreateModel does all three. InvalidArgument: an
  // image too small for two poolings (under 4x4).
  static absl::StatusOr<std::unique_ptr<CnnModel>> Create(const CnnSpec& spec,
                                                          const CnnImage& image,
                                                          const ModelContext& context);

  std::string name() const override { return "cnn"; }
  std::vector<VariableDef> Variables() const override;
  PredictionKind prediction_kind() const override { return PredictionKind::kClassProbabilities; }
  int64_t prediction_width() const override { return head_.width(); }

  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

  // Floating-point operations of one forward pass over `batch` images.
  double ForwardFlops(int64_t batch) const;

 private:
  // One conv - ReLU - maxpool stage and its buffers.
  struct Stage {
    std::string kernel_name, bias_name;
    Shape kernel_shape, bias_shape;
    int64_t height, width, in_channels, out_channels;
    std::unique_ptr<Convolution> conv;
    std::unique_ptr<ActivationLayer> relu;
    std::unique_ptr<Pooling> pool;
    std::vector<float> conv_out, relu_out, pool_out;
    std::vector<float> d_relu_out, d_conv_out;
  };

  CnnModel(const CnnImage& image, const CnnSpec& spec, const ModelContext& context,
           const model_internal::DenseStackConfig& dense);
  absl::Status StageForward(const ParameterView& parameters, int64_t batch, const float* input,
                            Stage* stage);
  absl::Status StageBackward(const ParameterView& parameters, int64_t batch, const float* input,
                             const float* d_output, float* d_input, Stage* stage,
                             Gradients* gradients);

  const CnnImage image_;
  const uint64_t seed_;
  Stage stages_[2];
  model_internal::DenseStack dense_;
  model_internal::LossHead head_;
  std::vector<float> dlogits_, d_flat_, d_pool1_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_CNN_MODEL_H_
