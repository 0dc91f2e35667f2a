#ifndef PSTRAIN_COMMON_MODEL_ONNX_GRAPH_H_
#define PSTRAIN_COMMON_MODEL_ONNX_GRAPH_H_

// How a model describes its prediction as an ONNX graph (opset 17 unless
// the description requires a later one, float32, a dynamic batch): the graph every export writes as
// model.onnx, which ONNX Runtime runs with pstrain's results. A model (Model::DescribeOnnx) adds
// nodes over the graph's inputs, its own variables and constants, and names the outputs; the
// exporter (common/export/onnx_model_builder.h) implements this interface over the trained weights.
// The interface is abstract so that a plug-in library describes its graph without linking the
// exporter or the ONNX protos.
//
// Values are named by strings. A call that cannot do what it is asked (an
// unknown variable, an input declared twice with another shape) records
// the first such error, which the exporter reports, and returns a name
// that refers to nothing; so a description is a plain sequence of calls.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pstrain {

// One attribute of a node: an int, a float, a list of ints or a string.
struct OnnxAttribute {
  enum class Type { kInt, kFloat, kInts, kString };

  static OnnxAttribute Int(std::string name, int64_t value) {
    OnnxAttribute a(std::move(name), Type::kInt);
    a.int_value = value;
    return a;
  }
  static OnnxAttribute Float(std::string name, float value) {
    OnnxAttribute a(std::move(name), Type::kFloat);
    a.float_value = value;
    return a;
  }
  static OnnxAttribute Ints(std::string name, std::vector<int64_t> values) {
    OnnxAttribute a(std::move(name), Type::kInts);
    a.int_values = std::move(values);
    return a;
  }
  static OnnxAttribute String(std::string name, std::string value) {
    OnnxAttribute a(std::move(name), Type::kString);
    a.string_value = std::move(value);
    return a;
  }

  std::string name;
  Type type;
  int64_t int_value = 0;
  float float_value = 0;
  std::vector<int64_t> int_values;
  std::string string_value;

 private:
  OnnxAttribute(std::string n, Type t) : name(std::move(n)), type(t) {}
};

// The graph inputs that carry a batch's sparse features (ExampleBatch's
// sparse_ids and sparse_values), padded to a common length per batch.
struct OnnxSparseInput {
  std::string ids;     // int64 [batch, n]
  std::string values;  // float32 [batch, n]; 0 in padding entries
};

class OnnxGraph {
 public:
  virtual ~OnnxGraph() = default;

  // The graph input "dense": ExampleBatch.dense, float32 [batch, width]
  // (images flattened in height-width-channel order).
  virtual std::string DenseInput(int64_t width) = 0;

  // The graph inputs "sparse_ids" and "sparse_values". `ids_per_example`
  // fixes n (one id per field); 0 leaves it free. An example with fewer
  // ids is padded with entries of value 0 (any id), which add nothing to a
  // sum or a mean.
  virtual OnnxSparseInput SparseInput(int64_t ids_per_example) = 0;

  // A graph input of its own: float32 or int64 [batch, dims...], named
  // `name` and documented as holding `meaning`. An imported graph of
  // several inputs keeps its own this way.
  virtual std::string Input(const std::string& name, bool is_int64,
                            const std::vector<int64_t>& dims, const std::string& meaning) = 0;

  // Dense variable `name` (Model::Variables) in its shape, as trained.
  virtual std::string Variable(const std::string& name) = 0;

  // The rows of embedding table `table` that int64 `ids` (any shape) name:
  // float32 [ids..., dim]. A fixed table holds every row (those training
  // never touched at their initial value, as in training). A dynamic table
  // holds the rows training stored; any other id reads a zero row.
  virtual std::string EmbeddingRows(const std::string& table, const std::string& ids) = 0;

  // Constants: float32 and int64 tensors of shape `dims` (empty: a scalar).
  virtual std::string FloatConstant(std::vector<int64_t> dims, std::vector<float> values) = 0;
  virtual std::string Int64Constant(std::vector<int64_t> dims, std::vector<int64_t> values) = 0;

  // A node of ONNX's default domain at the graph's opset (17, or what
  // RequireOpset raised it to) with one output, which it returns. An empty
  // input name leaves an optional input out (one before an input given).
  virtual std::string Node(const std::string& op, const std::vector<std::string>& inputs,
                           const std::vector<OnnxAttribute>& attributes = {}) = 0;

  // Makes `value`, float32 [batch, width], the graph output `name`;
  // `meaning` documents it. Every graph has the output "predictions":
  // what pstrain predict gives (class probabilities, P(label = 1), or the
  // predicted value).
  virtual void Output(const std::string& name, const std::string& value, int64_t width,
                      const std::string& meaning) = 0;

  // Declares that the description's nodes are in the forms of ONNX's
  // default domain at `opset` (an imported graph's, say, whose Pad takes
  // opset 18's axes input): the graph imports the largest opset any call
  // asked for, and 17 when none asked for more. An opset below 17 changes
  // nothing, since every node built-in models describe is valid at 17 and
  // the forms of 13 to 16 that pstrain imports still are.
  virtual void RequireOpset(int64_t opset) = 0;

  // A node as Node makes it, with `outputs` outputs (Split's parts,
  // LayerNormalization's Y, Mean and InvStdDev), whose names it returns in
  // order.
  virtual std::vector<std::string> NodeOutputs(const std::string& op,
                                               const std::vector<std::string>& inputs,
                                               const std::vector<OnnxAttribute>& attributes,
                                               int outputs) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_GRAPH_H_
