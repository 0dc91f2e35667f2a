#ifndef PSTRAIN_COMMON_ONNX_ONNX_VALUES_H_
#define PSTRAIN_COMMON_ONNX_ONNX_VALUES_H_

// The values and nodes of an imported ONNX graph as its kernels
// (common/model/onnx/onnx_kernels.h) see them.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pstrain {

// The most elements one value may hold (4 GiB of floats): larger dims, from
// a damaged file or a batch too large for the graph, are refused.
inline constexpr int64_t kMaxOnnxValueElements = int64_t{1} << 30;

// The number of elements of `dims`, or -1 when a dim is negative or the
// product exceeds kMaxOnnxValueElements.
inline int64_t OnnxElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxOnnxValueElements / d)) return -1;
    n *= d;
  }
  return n;
}

// One value of the graph for one batch size: float32 (activations,
// parameters, float constants) or int64 (shape arithmetic).
struct OnnxValue {
  std::vector<int64_t> dims;
  bool is_int64 = false;
  // Fixed once the batch size is: a constant, or computed from constants
  // (folded). Parameters and what depends on the input are not.
  bool known = false;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  // d(loss)/d(value), for float values the output depends on.
  std::vector<float> grad;
  // Dims over kMaxOnnxValueElements (or negative): nothing is allocated,
  // and the plan refuses the node.
  bool oversized = false;
  // The input's and the parameters' values, and the parameters' gradients,
  // stay in the caller's buffers for a pass rather than being copied in and
  // out: set, these stand for `floats` and `grad`. Kernels read every input
  // through data() and write its gradient through grad_data().
  const float* borrowed_values = nullptr;
  float* borrowed_grad = nullptr;

  int64_t num_elements() const { return std::max<int64_t>(OnnxElements(dims), 0); }
  const float* data() const { return borrowed_values != nullptr ? borrowed_values : floats.data(); }
  float* grad_data() { return borrowed_grad != nullptr ? borrowed_grad : grad.data(); }
  // Whether Backward wants d(loss)/d(value).
  bool takes_grad() const { return borrowed_grad != nullptr || !grad.empty(); }
};

// One node, its inputs and outputs as indices into the plan's values (-1:
// an optional input left out) and its attributes by name.
struct OnnxNode {
  std::string name;  // the node's name, or its first output's
  std::string op;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::map<std::string, int64_t> int_attributes;
  std::map<std::string, float> float_attributes;
  std::map<std::string, std::vector<int64_t>> ints_attributes;
  std::map<std::string, std::string> string_attributes;

  int64_t IntAttribute(const std::string& key, int64_t fallback) const {
    auto it = int_attributes.find(key);
    return it == int_attributes.end() ? fallback : it->second;
  }
  float FloatAttribute(const std::string& key, float fallback) const {
    auto it = float_attributes.find(key);
    return it == float_attributes.end() ? fallback : it->second;
  }
  std::string StringAttribute(const std::string& key, const std::string& fallback) const {
    auto it = string_attributes.find(key);
    return it == string_attributes.end() ? fallback : it->second;
  }
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_ONNX_ONNX_VALUES_H_
