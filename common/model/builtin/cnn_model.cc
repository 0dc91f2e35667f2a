#include "common/model/builtin/cnn_model.h"

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/onnx_layers.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<CnnModel>> CnnModel::Create(const CnnSpec& spec,
                                                           const CnnImage& image,
                                                           const ModelContext& context) {
  // Two 2x2 poolings: smaller images have nothing left to pool.
  if (image.height < 4 || image.width < 4 || image.channels < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cnn needs images of at least 4x4, got ",
                                                   image.height, "x", image.width, "x",
                                                   image.channels));
  }
  model_internal::DenseStackConfig dense;
  dense.input_dim = (image.height / 2 / 2) * (image.width / 2 / 2) * spec.conv2_filters();
  dense.hidden_units = {spec.dense_units()};
  dense.dropout = spec.dropout();
  dense.output_dim = spec.num_classes();
  return std::unique_ptr<CnnModel>(new CnnModel(image, spec, context, dense));
}

CnnModel::CnnModel(const CnnImage& image, const CnnSpec& spec, const ModelContext& context,
                   const model_internal::DenseStackConfig& dense)
    : image_(image),
      seed_(context.seed),
      dense_(context.compute, dense, context.seed),
      head_(context.compute, PredictionKind::kClassProbabilities, dense.output_dim) {
  int64_t height = image.height, width = image.width, channels = image.channels;
  const int64_t filters[2] = {spec.conv1_filters(), spec.conv2_filters()};
  for (int i = 0; i < 2; ++i) {
    Stage& stage = stages_[i];
    const std::string name = absl::StrCat("conv", i + 1);
    stage.kernel_name = name + "/kernel";
    stage.bias_name = name + "/bias";
    stage.kernel_shape = Shape({spec.kernel_size(), spec.kernel_size(), channels, filters[i]});
    stage.bias_shape = Shape({filters[i]});
    stage.height = height;
    stage.width = width;
    stage.in_channels = channels;
    stage.out_channels = filters[i];
    ConvolutionConfig config;
    config.in_channels = channels;
    config.out_channels = filters[i];
    config.kernel = spec.kernel_size();
    stage.conv = std::make_unique<Convolution>(context.compute, config);
    stage.relu = std::make_unique<ActivationLayer>(context.compute, ActivationKind::kRelu);
    stage.pool = std::make_unique<Pooling>(context.compute, PoolingKind::kMax, 2, 2);
    height /= 2;
    width /= 2;
    channels = filters[i];
  }
}

std::vector<VariableDef> CnnModel::Variables() const {
  std::vector<VariableDef> defs;
  for (const Stage& stage : stages_) {
    for (int k = 0; k < 2; ++k) {
      VariableDef def;
      def.spec.set_name(k == 0 ? stage.kernel_name : stage.bias_name);
      def.spec.set_kind(VARIABLE_KIND_DENSE);
      def.spec.set_dtype(DATA_TYPE_FLOAT32);
      (k == 0 ? stage.kernel_shape : stage.bias_shape).ToProto(def.spec.mutable_shape());
      def.spec.mutable_initializer()->set_kind(k == 0 ? INITIALIZER_KIND_GLOROT_UNIFORM
                                                      : INITIALIZER_KIND_ZEROS);
      def.spec.mutable_initializer()->set_seed(seed_);
      defs.push_back(def);
    }
  }
  for (VariableDef& def : dense_.Variables()) defs.push_back(std::move(def));
  return defs;
}

double CnnModel::ForwardFlops(int64_t batch) const {
  double flops = dense_.ForwardFlops(batch);
  for (const Stage& stage : stages_) {
    flops += stage.conv->ForwardFlops(batch, stage.height, stage.width);
  }
  return flops;
}

absl::Status CnnModel::StageForward(const ParameterView& parameters, int64_t batch,
                                    const float* input, Stage* stage) {
  absl::StatusOr<const float*> kernel = parameters.Dense(stage->kernel_name, stage->kernel_shape);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<const float*> bias = parameters.Dense(stage->bias_name, stage->bias_shape);
  if (!bias.ok()) return bias.status();
  const int64_t conv_size = batch * stage->height * stage->width * stage->out_channels;
  stage->conv_out.resize(conv_size);
  stage->relu_out.resize(conv_size);
  stage->pool_out.resize(batch * stage->pool->OutputSize(stage->height) *
                         stage->pool->OutputSize(stage->width) * stage->out_channels);
  absl::Status status = stage->conv->Forward(batch, stage->height, stage->width, input, *kernel,
                                             *bias, stage->conv_out.data());
  if (!status.ok()) return status;
  status = stage->relu->Forward(conv_size, stage->conv_out.data(), stage->relu_out.data());
  if (!status.ok()) return status;
  return stage->pool->Forward(batch, stage->height, stage->width, stage->out_channels,
                              stage->relu_out.data(), stage->pool_out.data());
}

absl::Status CnnModel::StageBackward(const ParameterView& parameters, int64_t batch,
                                     const float* input, const float* d_output, float* d_input,
                                     Stage* stage, Gradients* gradients) {
  const int64_t conv_size = batch * stage->height * stage->width * stage->out_channels;
  stage->d_relu_out.resize(conv_size);
  stage->d_conv_out.resize(conv_size);
  absl::Status status = stage->pool->Backward(
      batch, stage->height, stage->width, stage->out_channels, d_output, stage->d_relu_out.data());
  if (!status.ok()) return status;
  status = stage->relu->Backward(conv_size, stage->conv_out.data(), stage->d_relu_out.data(),
                                 stage->d_conv_out.data());
  if (!status.ok()) return status;
  absl::StatusOr<const float*> kernel = parameters.Dense(stage->kernel_name, stage->kernel_shape);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<float*> d_kernel = gradients->DenseBuffer(stage->kernel_name, stage->kernel_shape);
  if (!d_kernel.ok()) return d_kernel.status();
  absl::StatusOr<float*> d_bias = gradients->DenseBuffer(stage->bias_name, stage->bias_shape);
  if (!d_bias.ok()) return d_bias.status();
  return stage->conv->Backward(batch, stage->height, stage->width, input, *kernel,
                               stage->d_conv_out.data(), d_input, *d_kernel, *d_bias);
}

absl::Status CnnModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                               PassMode mode, ModelOutput* output) {
  absl::StatusOr<const float*> input =
      DenseInput(batch, image_.height * image_.width * image_.channels);
  if (!input.ok()) return input.status();
  absl::Status status = StageForward(parameters, batch.size, *input, &stages_[0]);
  if (!status.ok()) return status;
  status = StageForward(parameters, batch.size, stages_[0].pool_out.data(), &stages_[1]);
  if (!status.ok()) return status;
  const float* logits = nullptr;
  status = dense_.Forward(parameters, batch.size, stages_[1].pool_out.data(), mode, &logits);
  if (!status.ok()) return status;
  return head_.Forward(batch.size, logits, batch.labels, output);
}

absl::Status CnnModel::DescribeOnnx(OnnxGraph& graph) const {
  const std::string input = graph.DenseInput(image_.height * image_.width * image_.channels);
  std::string x =
      OnnxImageToChannelsFirst(graph, input, image_.height, image_.width, image_.channels);
  for (const Stage& stage : stages_) {
    x = OnnxConvolution(graph, stage.conv->config(), x, stage.kernel_name, stage.bias_name);
    x = OnnxActivation(graph, ActivationKind::kRelu, x);
    x = OnnxPooling(graph, PoolingKind::kMax, 2, 2, x);
  }
  const Stage& last = stages_[1];
  x = OnnxChannelsFirstToRows(graph, x, last.pool->OutputSize(last.height),
                              last.pool->OutputSize(last.width), last.out_channels);
  head_.DescribeOnnx(graph, dense_.DescribeOnnx(graph, x));
  return absl::OkStatus();
}

absl::Status CnnModel::ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                        ModelOutput* output, Gradients* gradients) {
  absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
  if (!status.ok()) return status;
  const int64_t n = batch.size;
  dlogits_.resize(n * head_.width());
  status = head_.Backward(n, *output, batch.labels, dlogits_.data());
  if (!status.ok()) return status;
  d_flat_.resize(stages_[1].pool_out.size());
  status = dense_.Backward(parameters, n, stages_[1].pool_out.data(), dlogits_.data(),
                           d_flat_.data(), gradients);
  if (!status.ok()) return status;
  d_pool1_.resize(stages_[0].pool_out.size());
  status = StageBackward(parameters, n, stages_[0].pool_out.data(), d_flat_.data(), d_pool1_.data(),
                         &stages_[1], gradients);
  if (!status.ok()) return status;
  return StageBackward(parameters, n, batch.dense.data<float>(), d_pool1_.data(),
                       /*d_input=*/nullptr, &stages_[0], gradients);
}

}  // namespace pstrain
