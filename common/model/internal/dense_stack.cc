#include "common/model/internal/dense_stack.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/layers/onnx_layers.h"

namespace pstrain {
namespace model_internal {
namespace {

VariableDef DenseVariable(const std::string& name, const Shape& shape, InitializerKind kind,
                          uint64_t seed) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_DENSE);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  shape.ToProto(def.spec.mutable_shape());
  def.spec.mutable_initializer()->set_kind(kind);
  def.spec.mutable_initializer()->set_seed(seed);
  return def;
}

}  // namespace

DenseStack::DenseStack(ComputeContext* context, DenseStackConfig config, uint64_t seed)
    : config_(std::move(config)), seed_(seed) {
  int64_t in = config_.input_dim;
  const size_t hidden = config_.hidden_units.size();
  for (size_t i = 0; i <= hidden; ++i) {
    const bool is_output = i == hidden;
    const int64_t out = is_output ? config_.output_dim : config_.hidden_units[i];
    const std::string layer_name = is_output ? absl::StrCat(config_.prefix, config_.output_name)
                                             : absl::StrCat(config_.prefix, "hidden_", i);
    Layer layer;
    layer.weights_name = layer_name + "/weights";
    layer.bias_name = layer_name + "/bias";
    layer.weights_shape = Shape({in, out});
    layer.bias_shape = Shape({out});
    layer.product = std::make_unique<InnerProduct>(context, in, out);
    if (!is_output) {
      layer.activation = std::make_unique<ActivationLayer>(context, config_.activation);
      if (config_.dropout > 0) {
        // A distinct mask stream per layer, reproducible from the seed.
        layer.dropout =
            std::make_unique<Dropout>(config_.dropout, seed ^ (0x5bd1e995ULL * (i + 1)));
      }
    }
    layers_.push_back(std::move(layer));
    in = out;
  }
}

std::string DenseStack::DescribeOnnx(OnnxGraph& graph, const std::string& input) const {
  std::string x = input;
  for (const Layer& layer : layers_) {
    x = OnnxInnerProduct(graph, x, layer.weights_name, layer.bias_name);
    if (layer.activation != nullptr) x = OnnxActivation(graph, config_.activation, x);
  }
  return x;
}

std::vector<VariableDef> DenseStack::Variables() const {
  std::vector<VariableDef> defs;
  for (const Layer& layer : layers_) {
    defs.push_back(DenseVariable(layer.weights_name, layer.weights_shape,
                                 INITIALIZER_KIND_GLOROT_UNIFORM, seed_));
    defs.push_back(DenseVariable(layer.bias_name, layer.bias_shape, INITIALIZER_KIND_ZEROS, seed_));
  }
  return defs;
}

double DenseStack::ForwardFlops(int64_t batch) const {
  double flops = 0;
  for (const Layer& layer : layers_) flops += layer.product->ForwardFlops(batch);
  return flops;
}

absl::Status DenseStack::Forward(const ParameterView& parameters, int64_t batch, const float* input,
                                 PassMode mode, const float** output) {
  const float* x = input;
  for (Layer& layer : layers_) {
    absl::StatusOr<const float*> w = parameters.Dense(layer.weights_name, layer.weights_shape);
    if (!w.ok()) return w.status();
    absl::StatusOr<const float*> b = parameters.Dense(layer.bias_name, layer.bias_shape);
    if (!b.ok()) return b.status();
    const int64_t size = batch * layer.product->output_dim();
    layer.pre.resize(size);
    absl::Status status = layer.product->Forward(batch, x, *w, *b, layer.pre.data());
    if (!status.ok()) return status;
    if (layer.activation == nullptr) {
      layer.output = layer.pre.data();
    } else {
      layer.post.resize(size);
      status = layer.activation->Forward(size, layer.pre.data(), layer.post.data());
      if (!status.ok()) return status;
      layer.output = layer.post.data();
      if (layer.dropout != nullptr) {
        layer.dropped.resize(size);
        status = layer.dropout->Forward(size, layer.post.data(), layer.dropped.data(), mode);
        if (!status.ok()) return status;
        layer.output = layer.dropped.data();
      }
    }
    x = layer.output;
  }
  *output = x;
  return absl::OkStatus();
}

absl::Status DenseStack::Backward(const ParameterView& parameters, int64_t batch,
                                  const float* input, const float* d_output, float* d_input,
                                  Gradients* gradients) {
  // `dy` is the gradient with respect to the current layer's output (after
  // dropout); it lives in one of two ping-pong buffers.
  const float* dy = d_output;
  for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
    Layer& layer = layers_[i];
    const int64_t size = batch * layer.product->output_dim();
    std::vector<float>& scratch = (layers_.size() - i) % 2 == 0 ? grad_a_ : grad_b_;
    float* d_pre = const_cast<float*>(dy);
    if (layer.activation != nullptr) {
      scratch.resize(std::max<size_t>(scratch.size(), size));
      d_pre = scratch.data();
      absl::Status status;
      if (layer.dropout != nullptr) {
        status = layer.dropout->Backward(size, dy, d_pre);
        if (!status.ok()) return status;
        dy = d_pre;
      }
      status = layer.activation->Backward(size, layer.pre.data(), dy, d_pre);
      if (!status.ok()) return status;
    }
    absl::StatusOr<const float*> w = parameters.Dense(layer.weights_name, layer.weights_shape);
    if (!w.ok()) return w.status();
    absl::StatusOr<float*> dw = gradients->DenseBuffer(layer.weights_name, layer.weights_shape);
    if (!dw.ok()) return dw.status();
    absl::StatusOr<float*> db = gradients->DenseBuffer(layer.bias_name, layer.bias_shape);
    if (!db.ok()) return db.status();
    const float* x = i == 0 ? input : layers_[i - 1].output;
    float* dx = nullptr;
    if (i > 0) {
      std::vector<float>& next = &scratch == &grad_a_ ? grad_b_ : grad_a_;
      next.resize(std::max<size_t>(next.size(), batch * layer.product->input_dim()));
      dx = next.data();
    } else {
      dx = d_input;
    }
    absl::Status status = layer.product->Backward(batch, x, *w, d_pre, dx, *dw, *db);
    if (!status.ok()) return status;
    dy = dx;
  }
  return absl::OkStatus();
}

}  // namespace model_internal
}  // namespace pstrain
