#ifndef PSTRAIN_COMMON_MODEL_LAYERS_ONNX_LAYERS_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_ONNX_LAYERS_H_

// The ONNX form of each layer of this library, evaluation mode (dropout is
// the identity there, so it has none): what the built-in models' and a
// plug-in's Model::DescribeOnnx compose. Each returns the value it adds to
// `graph` (common/model/onnx_graph.h).

#include <cstdint>
#include <string>

#include "common/model/layers/activation_layer.h"
#include "common/model/layers/convolution.h"
#include "common/model/layers/dot_interaction.h"
#include "common/model/layers/embedding_lookup.h"
#include "common/model/layers/pooling.h"
#include "common/model/onnx_graph.h"

namespace pstrain {

// InnerProduct: x [batch, in] times the dense variable `weights` [in, out]
// plus `bias` [out]: [batch, out].
std::string OnnxInnerProduct(OnnxGraph& graph, const std::string& x, const std::string& weights,
                             const std::string& bias);

// ActivationLayer, elementwise. Opset 17 has no Gelu: GELU is written
// x * (1 + erf(x / sqrt(2))) / 2, the exact form the layer computes.
std::string OnnxActivation(OnnxGraph& graph, ActivationKind kind, const std::string& x);

// EmbeddingLookup with one bag per example: the combined rows of table
// `table` for each example's ids, [batch, dim].
std::string OnnxEmbeddingBags(OnnxGraph& graph, const std::string& table,
                              const OnnxSparseInput& input, EmbeddingCombiner combiner);

// EmbeddingLookup with one bag per id, for examples of exactly `fields` ids
// (one per field): each id's row scaled as the combiner scales a bag of
// one, the `fields` rows side by side, [batch, fields * dim].
std::string OnnxEmbeddingPerId(OnnxGraph& graph, const std::string& table,
                               const OnnxSparseInput& input, EmbeddingCombiner combiner,
                               int64_t fields, int64_t dim);

// DotInteraction over x [batch, n * d], the n vectors side by side:
// [batch, d + n (n - 1) / 2], the first vector, then the lower triangle of
// X X^T (X = x as [batch, n, d]) gathered from its flattened rows.
std::string OnnxDotInteraction(OnnxGraph& graph, const DotInteraction& layer, const std::string& x);

// Convolution of an image in ONNX's channels-first layout, x [batch, in,
// height, width] -> [batch, out, height', width'], with the layer's HWIO
// kernel variable `kernel` (transposed to ONNX's OIHW in the graph) and
// `bias`.
std::string OnnxConvolution(OnnxGraph& graph, const ConvolutionConfig& config, const std::string& x,
                            const std::string& kernel, const std::string& bias);

// Pooling without padding over channels-first x [batch, c, height, width].
std::string OnnxPooling(OnnxGraph& graph, PoolingKind kind, int64_t window, int64_t stride,
                        const std::string& x);

// Channels-last images [batch, height * width * channels], as a batch
// holds them, to channels-first [batch, channels, height, width]; and a
// channels-first activation back to flat channels-last rows [batch,
// height * width * channels], as the dense layers after it read them.
std::string OnnxImageToChannelsFirst(OnnxGraph& graph, const std::string& x, int64_t height,
                                     int64_t width, int64_t channels);
std::string OnnxChannelsFirstToRows(OnnxGraph& graph, const std::string& x, int64_t height,
                                    int64_t width, int64_t channels);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_ONNX_LAYERS_H_
