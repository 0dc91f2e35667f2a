#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_

// A feed-forward ONNX graph (opset 13 to 21) as pstrain runs it: its float
// initializers are the variables, and each node has a forward and a
// backward pass. What torch.onnx.export writes at its defaults loads as it
// is: shape arithmetic (Shape, Gather, Unsqueeze, Concat, Constant feeding
// Reshape) is folded once the batch size is known.
//
// The graph has one input or several, each float [batch, ...] (features,
// ids' weights, counts) or int64 ids [batch] or [batch, n]. An initializer
// whose rows a Gather picks by ids (nn.Embedding) is an embedding table: a
// pass reads only the rows its batch names, and its gradient is those
// rows. The ids a table's Gather reads may be an input's, or taken from
// them by constant selection (PyTorch's ids[:, k] is a Gather along axis
// 1 by a constant; Squeeze, Unsqueeze, Reshape, Flatten and Identity also
// keep ids ids); nothing else computes with ids.
//
//   ASSIGN_OR_RETURN(auto program, OnnxProgram::Load("model.onnx"));
//   ASSIGN_OR_RETURN(RowIds rows, program->TableIds(batch, inputs));
//   ASSIGN_OR_RETURN(const float* y, program->Forward(view, batch, inputs, mode, seed));
//   RETURN_IF_ERROR(program->Backward(view, dy, &gradients));
//
// Thread-compatible: it keeps the activations of the last Forward.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/model/model.h"
#include "common/onnx/onnx_values.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace pstrain {
namespace onnx_internal {
struct LoadedGraph;
struct Plan;
}  // namespace onnx_internal

// The opsets of the default domain that load.
inline constexpr int64_t kMinOnnxOpset = 13;
inline constexpr int64_t kMaxOnnxOpset = 21;

// A float initializer: one variable of the imported model. Its values stay
// in the file (ReadOnnxInitializer): whoever creates the variables reads
// them there, and a worker, which pulls them, holds no second copy.
struct OnnxInitializer {
  std::string name;
  std::vector<int64_t> dims;
  // Read only by Gathers by ids: an embedding table [rows, dim], passed to
  // Forward as the rows a batch reads (ParameterView::Rows) and
  // differentiated as those rows.
  bool embedding_table = false;
  // False for a statistic rather than a weight: an initializer read only
  // as a BatchNormalization's mean or variance, which the model keeps as
  // the file holds it (no gradient, no optimizer update).
  bool trainable = true;
};

// One input of the graph, as the file declares it.
struct OnnxGraphInput {
  std::string name;
  bool is_int64 = false;      // ids; float otherwise
  std::vector<int64_t> dims;  // after the batch; empty: [batch]
  int64_t width = 1;          // elements per example: the product of dims
};

// One input's values for a batch of B examples: B * width floats or ids,
// whichever the input takes, read in place (they must stay as they are
// until the Backward that follows a Forward).
struct OnnxInputData {
  const float* floats = nullptr;
  const int64_t* ids = nullptr;
};

class OnnxProgram {
 public:
  // Loads and checks the graph at `path`, to compute its output named
  // `output` (empty: its only output; the nodes that only other outputs
  // need do not run). InvalidArgument naming the file and, where one is at
  // fault, the node, its op and the reason: a file that is not an ONNX
  // model (truncated, garbled), an opset outside [13, 21] or another
  // domain, an unsupported op, external data that cannot be read or lies
  // outside the file's folder (onnx_external_data.h), a graph without an
  // input, an input neither float [batch, ...] nor int64 ids [batch] or
  // [batch, n], ids computed with (not only selected or gathered by), a
  // Gather by ids of anything but an initializer's rows, such a table read
  // otherwise too, several outputs and none named (listing them), no
  // output of that name, an output not float [batch, width], no float
  // initializer to train, shapes that do not fit. NotFound: no such file.
  static absl::StatusOr<std::unique_ptr<OnnxProgram>> Load(const std::string& path,
                                                           const std::string& output = "");
  // The same from the file's bytes; `origin` names it in messages. External
  // data is refused: bytes have no folder to find it in.
  static absl::StatusOr<std::unique_ptr<OnnxProgram>> Parse(absl::string_view bytes,
                                                            const std::string& origin,
                                                            const std::string& output = "");

  ~OnnxProgram();
  OnnxProgram(const OnnxProgram&) = delete;
  OnnxProgram& operator=(const OnnxProgram&) = delete;

  // The graph's inputs, in the file's order; Forward takes their values in
  // the same order.
  const std::vector<OnnxGraphInput>& inputs() const { return inputs_; }
  // Values per example of the output.
  int64_t output_width() const { return output_width_; }
  const std::string& output_name() const;
  const std::vector<OnnxInitializer>& initializers() const { return initializers_; }

  // The output [batch, output_width] for `inputs` (one per input, in
  // order), with every initializer's value from `parameters` (same names
  // and shapes; embedding tables as the rows of every id the batch looks
  // up: TableIds). Dropout drops in kTrain only, with masks drawn from
  // `seed`. The pointer is valid until the next call. The inputs and the
  // parameters are read in place, not copied: they must stay as they are
  // until the Backward that follows. InvalidArgument: inputs of another
  // number or kind, a missing or misshapen parameter, an id without its
  // row, or a batch size the graph's shapes cannot take.
  absl::StatusOr<const float*> Forward(const ParameterView& parameters, int64_t batch,
                                       absl::Span<const OnnxInputData> inputs, PassMode mode,
                                       uint64_t seed);
  // The same for a graph of one input: float features [batch, width]...
  absl::StatusOr<const float*> Forward(const ParameterView& parameters, int64_t batch,
                                       const float* input, PassMode mode, uint64_t seed);
  // ... or ids [batch, width].
  absl::StatusOr<const float*> Forward(const ParameterView& parameters, int64_t batch,
                                       absl::Span<const int64_t> ids, PassMode mode, uint64_t seed);

  // The unique ids, ascending, each embedding table's Gathers read for
  // `inputs`: the rows Forward must be given. Empty for a graph without
  // tables. Errors as Forward's for the inputs. It runs the selections of
  // ids, so it must not come between a Forward and its Backward.
  absl::StatusOr<RowIds> TableIds(int64_t batch, absl::Span<const OnnxInputData> inputs);

  // Given d(loss)/d(output) of the last Forward, writes the gradient of
  // every initializer into *gradients (accumulated there, in the buffers
  // Gradients::DenseBuffer and RowsBuffer lend; a table's as the rows the
  // Forward read). `parameters` are those of the Forward.
  absl::Status Backward(const ParameterView& parameters, const float* d_output,
                        Gradients* gradients);

  // Writes the graph again, for evaluation (Dropout as Identity), through
  // `graph` (common/model/onnx_graph.h): its initializers as the model's
  // variables (a table's Gathers as OnnxGraph::EmbeddingRows), its inputs
  // read from `inputs` (one per input, each of the input's own type and
  // dims), at the graph's opset when above the interface's 17
  // (OnnxGraph::RequireOpset), so that nodes in the forms of opsets 18 to
  // 21 stay valid. Returns the output, reshaped to [batch, output_width].
  std::string Describe(OnnxGraph& graph, const std::vector<std::string>& inputs) const;

 private:
  using Plan = onnx_internal::Plan;

  OnnxProgram() = default;
  // `data_folder`: where external data is read from (DecodeOnnxTensor).
  static absl::StatusOr<std::unique_ptr<OnnxProgram>> FromModel(const onnx::ModelProto& model,
                                                                const std::string& origin,
                                                                const std::string& data_folder,
                                                                const std::string& output);
  absl::StatusOr<Plan*> PlanFor(int64_t batch);
  // InvalidArgument unless node `n` reads ids (values that depend on the
  // inputs' ids) only as the table lookups and selections of ids may.
  absl::Status CheckIdsUse(size_t n, const std::vector<OnnxValue>& values) const;
  // The plan for `batch` holding `inputs`, with the ids selected from them.
  absl::StatusOr<Plan*> PlanWithInputs(int64_t batch, absl::Span<const OnnxInputData> inputs);
  // Forward once the plan holds the inputs: binds the parameters and runs
  // the steps.
  absl::StatusOr<const float*> Run(Plan* plan, const ParameterView& parameters, PassMode mode,
                                   uint64_t seed);
  // Points the plan's value of parameter `p` at its values in
  // `parameters`; for a table, also maps the ids each of its Gathers reads
  // to those rows.
  absl::Status BindParameter(Plan& plan, size_t p, const ParameterView& parameters) const;

  std::unique_ptr<onnx_internal::LoadedGraph> graph_;
  std::vector<OnnxInitializer> initializers_;
  std::vector<OnnxGraphInput> inputs_;
  int64_t output_width_ = 0;
  std::map<int64_t, std::unique_ptr<Plan>> plans_;  // by batch size
  Plan* last_ = nullptr;                            // of the last Forward
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_
