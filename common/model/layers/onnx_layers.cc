#include "common/model/layers/onnx_layers.h"

#include <cmath>
#include <vector>

namespace pstrain {
namespace {

// `x` with a trailing axis of 1, to scale rows [..., dim] entry by entry.
std::string WithTrailingAxis(OnnxGraph& graph, const std::string& x) {
  return graph.Node("Unsqueeze", {x, graph.Int64Constant({1}, {-1})});
}

// `divisor` where it is not 0, else 1: EmbeddingLookup's kMean divides by a
// bag's weight sum only when that is not 0 (an empty bag reads zeros).
std::string NonZeroOrOne(OnnxGraph& graph, const std::string& divisor) {
  const std::string is_zero = graph.Node("Equal", {divisor, graph.FloatConstant({}, {0.0f})});
  return graph.Node("Where", {is_zero, graph.FloatConstant({}, {1.0f}), divisor});
}

}  // namespace

std::string OnnxInnerProduct(OnnxGraph& graph, const std::string& x, const std::string& weights,
                             const std::string& bias) {
  return graph.Node("Gemm", {x, graph.Variable(weights), graph.Variable(bias)});
}

std::string OnnxActivation(OnnxGraph& graph, ActivationKind kind, const std::string& x) {
  switch (kind) {
    case ActivationKind::kRelu:
      return graph.Node("Relu", {x});
    case ActivationKind::kTanh:
      return graph.Node("Tanh", {x});
    case ActivationKind::kSigmoid:
      return graph.Node("Sigmoid", {x});
    case ActivationKind::kGelu:
      break;
  }
  const std::string scaled =
      graph.Node("Mul", {x, graph.FloatConstant({}, {static_cast<float>(M_SQRT1_2)})});
  const std::string one_plus_erf =
      graph.Node("Add", {graph.Node("Erf", {scaled}), graph.FloatConstant({}, {1.0f})});
  const std::string half_x = graph.Node("Mul", {x, graph.FloatConstant({}, {0.5f})});
  return graph.Node("Mul", {half_x, one_plus_erf});
}

std::string OnnxEmbeddingBags(OnnxGraph& graph, const std::string& table,
                              const OnnxSparseInput& input, EmbeddingCombiner combiner) {
  // rows [batch, n, dim] scaled by their values [batch, n, 1], summed over n.
  const std::string rows = graph.EmbeddingRows(table, input.ids);
  const std::string weighted = graph.Node("Mul", {rows, WithTrailingAxis(graph, input.values)});
  const std::string entries_axis = graph.Int64Constant({1}, {1});
  const std::string sum =
      graph.Node("ReduceSum", {weighted, entries_axis}, {OnnxAttribute::Int("keepdims", 0)});
  if (combiner == EmbeddingCombiner::kSum) return sum;
  const std::string weight_sum =
      graph.Node("ReduceSum", {input.values, entries_axis}, {OnnxAttribute::Int("keepdims", 1)});
  return graph.Node("Div", {sum, NonZeroOrOne(graph, weight_sum)});
}

std::string OnnxEmbeddingPerId(OnnxGraph& graph, const std::string& table,
                               const OnnxSparseInput& input, EmbeddingCombiner combiner,
                               int64_t fields, int64_t dim) {
  // A bag of one id weighs its row by its value; the mean divides that by
  // the value again unless it is 0.
  std::string scale = input.values;
  if (combiner == EmbeddingCombiner::kMean) {
    scale = graph.Node("Div", {input.values, NonZeroOrOne(graph, input.values)});
  }
  const std::string rows = graph.EmbeddingRows(table, input.ids);
  const std::string weighted = graph.Node("Mul", {rows, WithTrailingAxis(graph, scale)});
  return graph.Node("Reshape", {weighted, graph.Int64Constant({2}, {0, fields * dim})});
}

std::string OnnxDotInteraction(OnnxGraph& graph, const DotInteraction& layer,
                               const std::string& x) {
  const int64_t n = layer.num_vectors();
  const int64_t d = layer.dim();
  const std::string vectors = graph.Node("Reshape", {x, graph.Int64Constant({3}, {0, n, d})});
  const std::string transposed =
      graph.Node("Transpose", {vectors}, {OnnxAttribute::Ints("perm", {0, 2, 1})});
  const std::string products = graph.Node("MatMul", {vectors, transposed});  // [batch, n, n]
  const std::string flat = graph.Node("Reshape", {products, graph.Int64Constant({2}, {0, n * n})});
  std::vector<int64_t> entries;
  for (const auto& [i, j] : layer.pairs()) entries.push_back(i * n + j);
  const int64_t num_pairs = static_cast<int64_t>(entries.size());
  const std::string dots =
      graph.Node("Gather", {flat, graph.Int64Constant({num_pairs}, std::move(entries))},
                 {OnnxAttribute::Int("axis", 1)});
  const std::string first =
      graph.Node("Slice", {x, graph.Int64Constant({1}, {0}), graph.Int64Constant({1}, {d}),
                           graph.Int64Constant({1}, {1})});
  return graph.Node("Concat", {first, dots}, {OnnxAttribute::Int("axis", 1)});
}

std::string OnnxConvolution(OnnxGraph& graph, const ConvolutionConfig& config, const std::string& x,
                            const std::string& kernel, const std::string& bias) {
  const int64_t padding = config.padding < 0 ? config.kernel / 2 : config.padding;
  const std::string oihw = graph.Node("Transpose", {graph.Variable(kernel)},
                                      {OnnxAttribute::Ints("perm", {3, 2, 0, 1})});
  return graph.Node("Conv", {x, oihw, graph.Variable(bias)},
                    {OnnxAttribute::Ints("kernel_shape", {config.kernel, config.kernel}),
                     OnnxAttribute::Ints("pads", {padding, padding, padding, padding}),
                     OnnxAttribute::Ints("strides", {config.stride, config.stride})});
}

std::string OnnxPooling(OnnxGraph& graph, PoolingKind kind, int64_t window, int64_t stride,
                        const std::string& x) {
  return graph.Node(kind == PoolingKind::kMax ? "MaxPool" : "AveragePool", {x},
                    {OnnxAttribute::Ints("kernel_shape", {window, window}),
                     OnnxAttribute::Ints("strides", {stride, stride})});
}

std::string OnnxImageToChannelsFirst(OnnxGraph& graph, const std::string& x, int64_t height,
                                     int64_t width, int64_t channels) {
  const std::string nhwc =
      graph.Node("Reshape", {x, graph.Int64Constant({4}, {-1, height, width, channels})});
  return graph.Node("Transpose", {nhwc}, {OnnxAttribute::Ints("perm", {0, 3, 1, 2})});
}

std::string OnnxChannelsFirstToRows(OnnxGraph& graph, const std::string& x, int64_t height,
                                    int64_t width, int64_t channels) {
  const std::string nhwc =
      graph.Node("Transpose", {x}, {OnnxAttribute::Ints("perm", {0, 2, 3, 1})});
  return graph.Node("Reshape", {nhwc, graph.Int64Constant({2}, {-1, height * width * channels})});
}

}  // namespace pstrain
