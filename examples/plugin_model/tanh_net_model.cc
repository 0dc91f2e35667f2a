// An example plug-in model: a classifier with one tanh hidden layer, built
// from pstrain's layers. Compiled into libtanh_net_model.so and used as
//
//   model { plugin {
//     library_path: "/path/to/libtanh_net_model.so"
//     config: "input_dim=784 hidden=64 classes=10"
//   } }
//
// Config: space-separated key=value pairs; input_dim and classes are
// required, hidden defaults to 64.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/model/layers/activation_layer.h"
#include "common/model/layers/inner_product.h"
#include "common/model/layers/onnx_layers.h"
#include "common/model/layers/softmax_cross_entropy.h"
#include "common/model/plugin_model_api.h"

namespace pstrain_example {

using pstrain::ExampleBatch;
using pstrain::Gradients;
using pstrain::ModelOutput;
using pstrain::ParameterView;
using pstrain::PassMode;
using pstrain::Shape;
using pstrain::VariableDef;

// x [batch, input] -> tanh(x W1 + b1) -> (.) W2 + b2 -> softmax.
class TanhNetModel : public pstrain::Model {
 public:
  TanhNetModel(const pstrain::ModelContext& context, int64_t input, int64_t hidden, int64_t classes)
      : seed_(context.seed),
        input_(input),
        hidden_(hidden),
        classes_(classes),
        layer1_(context.compute, input, hidden),
        tanh_(context.compute, pstrain::ActivationKind::kTanh),
        layer2_(context.compute, hidden, classes),
        loss_(context.compute, classes) {}

  std::string name() const override { return "tanh_net"; }

  std::vector<VariableDef> Variables() const override {
    return {Variable("w1", Shape({input_, hidden_}), true), Variable("b1", Shape({hidden_}), false),
            Variable("w2", Shape({hidden_, classes_}), true),
            Variable("b2", Shape({classes_}), false)};
  }

  pstrain::PredictionKind prediction_kind() const override {
    return pstrain::PredictionKind::kClassProbabilities;
  }
  int64_t prediction_width() const override { return classes_; }

  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override {
    const int64_t n = batch.size;
    if (n < 1 || batch.dense.shape() != Shape({n, input_})) {
      return absl::InvalidArgumentError(absl::StrCat("tanh_net needs dense features [", n, ", ",
                                                     input_, "], got ", batch.dense.DebugString()));
    }
    absl::StatusOr<const float*> w1 = parameters.Dense("w1", Shape({input_, hidden_}));
    absl::StatusOr<const float*> b1 = parameters.Dense("b1", Shape({hidden_}));
    absl::StatusOr<const float*> w2 = parameters.Dense("w2", Shape({hidden_, classes_}));
    absl::StatusOr<const float*> b2 = parameters.Dense("b2", Shape({classes_}));
    for (const auto* p : {&w1, &b1, &w2, &b2}) {
      if (!p->ok()) return p->status();
    }
    pre_.resize(n * hidden_);
    post_.resize(n * hidden_);
    logits_.resize(n * classes_);
    output->predictions.resize(n * classes_);
    output->example_losses.resize(n);
    absl::Status status = layer1_.Forward(n, batch.dense.data<float>(), *w1, *b1, pre_.data());
    if (status.ok()) status = tanh_.Forward(n * hidden_, pre_.data(), post_.data());
    if (status.ok()) status = layer2_.Forward(n, post_.data(), *w2, *b2, logits_.data());
    if (!status.ok()) return status;
    absl::StatusOr<double> loss =
        loss_.Forward(n, logits_.data(), batch.labels.data(), output->predictions.data(),
                      output->example_losses.data());
    if (!loss.ok()) return loss.status();
    output->loss = *loss;
    return absl::OkStatus();
  }

  // Optional: the evaluation pass as an ONNX graph (common/model/onnx_graph.h),
  // so that this model's exports also hold model.onnx. Without it an export
  // says that it wrote no ONNX file.
  absl::Status DescribeOnnx(pstrain::OnnxGraph& graph) const override {
    std::string x = graph.DenseInput(input_);
    x = pstrain::OnnxInnerProduct(graph, x, "w1", "b1");
    x = pstrain::OnnxActivation(graph, pstrain::ActivationKind::kTanh, x);
    const std::string logits = pstrain::OnnxInnerProduct(graph, x, "w2", "b2");
    graph.Output("logits", logits, classes_, "the class scores before the softmax");
    graph.Output("predictions", graph.Node("Softmax", {logits}), classes_, "class probabilities");
    return absl::OkStatus();
  }

  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override {
    absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
    if (!status.ok()) return status;
    const int64_t n = batch.size;
    d_logits_.resize(n * classes_);
    d_post_.resize(n * hidden_);
    status = loss_.Backward(n, output->predictions.data(), batch.labels.data(), d_logits_.data());
    if (!status.ok()) return status;
    absl::StatusOr<float*> dw2 = gradients->DenseBuffer("w2", Shape({hidden_, classes_}));
    absl::StatusOr<float*> db2 = gradients->DenseBuffer("b2", Shape({classes_}));
    absl::StatusOr<float*> dw1 = gradients->DenseBuffer("w1", Shape({input_, hidden_}));
    absl::StatusOr<float*> db1 = gradients->DenseBuffer("b1", Shape({hidden_}));
    for (const auto* p : {&dw2, &db2, &dw1, &db1}) {
      if (!p->ok()) return p->status();
    }
    const float* w2 = *parameters.Dense("w2", Shape({hidden_, classes_}));
    const float* w1 = *parameters.Dense("w1", Shape({input_, hidden_}));
    status = layer2_.Backward(n, post_.data(), w2, d_logits_.data(), d_post_.data(), *dw2, *db2);
    if (status.ok())
      status = tanh_.Backward(n * hidden_, pre_.data(), d_post_.data(), d_post_.data());
    if (status.ok()) {
      status = layer1_.Backward(n, batch.dense.data<float>(), w1, d_post_.data(),
                                /*dx=*/nullptr, *dw1, *db1);
    }
    return status;
  }

 private:
  VariableDef Variable(const std::string& name, const Shape& shape, bool weights) const {
    VariableDef def;
    def.spec.set_name(name);
    def.spec.set_kind(pstrain::VARIABLE_KIND_DENSE);
    def.spec.set_dtype(pstrain::DATA_TYPE_FLOAT32);
    shape.ToProto(def.spec.mutable_shape());
    def.spec.mutable_initializer()->set_kind(weights ? pstrain::INITIALIZER_KIND_GLOROT_UNIFORM
                                                     : pstrain::INITIALIZER_KIND_ZEROS);
    def.spec.mutable_initializer()->set_seed(seed_);
    return def;
  }

  const uint64_t seed_;
  const int64_t input_, hidden_, classes_;
  pstrain::InnerProduct layer1_;
  pstrain::ActivationLayer tanh_;
  pstrain::InnerProduct layer2_;
  pstrain::SoftmaxCrossEntropy loss_;
  std::vector<float> pre_, post_, logits_, d_logits_, d_post_;
};

absl::StatusOr<std::unique_ptr<pstrain::Model>> CreateTanhNet(
    const std::string& config, const pstrain::ModelContext& context) {
  int64_t input = 0, hidden = 64, classes = 0;
  for (absl::string_view pair : absl::StrSplit(config, ' ', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, '=');
    int64_t value;
    if (!absl::SimpleAtoi(kv.second, &value) || value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", pair, "\": expected key=positive integer"));
    }
    if (kv.first == "input_dim") {
      input = value;
    } else if (kv.first == "hidden") {
      hidden = value;
    } else if (kv.first == "classes") {
      classes = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown key \"", kv.first, "\""));
    }
  }
  if (input == 0 || classes < 2) {
    return absl::InvalidArgumentError("input_dim and classes (>= 2) are required");
  }
  return std::unique_ptr<pstrain::Model>(new TanhNetModel(context, input, hidden, classes));
}

}  // namespace pstrain_example

PSTRAIN_DEFINE_MODEL_PLUGIN(pstrain_example::CreateTanhNet)
