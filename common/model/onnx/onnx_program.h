#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_

// A feed-forward ONNX graph (opset 13 to 21) as pstrain runs it: its float
// initializers are the variables, and each node has a forward and a
// backward pass. What torch.onnx.export writes at its defaults loads as it
// is: shape arithmetic (Shape, Gather, Unsqueeze, Concat, Constant feeding
// Reshape) is folded once the batch size is known.
//
// The graph's one input is either float features [batch, ...] or int64
// categorical ids [batch, fields]. An initializer whose rows a Gather
// picks by those ids (nn.Embedding) is an embedding table: a pass reads
// only the rows its batch names, and its gradient is those rows.
//
//   ASSIGN_OR_RETURN(auto program, OnnxProgram::Load("model.onnx"));
//   ASSIGN_OR_RETURN(const float* y, program->Forward(view, batch, x, mode));
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
  // Read only by Gathers by the input's ids: an embedding table [rows,
  // dim], passed to Forward as the rows a batch reads
  // (ParameterView::Rows) and differentiated as those rows.
  bool embedding_table = false;
  // False for a statistic rather than a weight: an initializer read only
  // as a BatchNormalization's mean or variance, which the model keeps as
  // the file holds it (no gradient, no optimizer update).
  bool trainable = true;
};

class OnnxProgram {
 public:
  // Loads and checks the graph at `path`, to compute its output named
  // `output` (empty: its only output; the nodes that only other outputs
  // need do not run). InvalidArgument naming the file and, where one is at
  // fault, the node, its op and the reason: a file that is not an ONNX
  // model (truncated, garbled), an opset outside [13, 21] or another
  // domain, an unsupported op, external data that cannot be read or lies
  // outside the file's folder (onnx_external_data.h), a graph without exactly one
  // input, float [batch, ...] or int64 ids [batch, fields], the ids read by
  // anything but a Gather of an initializer's rows, such a table read
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

  // Whether the input is int64 ids [batch, fields] rather than float
  // features.
  bool input_is_ids() const;
  // Features (or ids) per example the input holds (the product of its dims
  // after the batch), and values per example of the output.
  int64_t input_width() const { return input_width_; }
  int64_t output_width() const { return output_width_; }
  const std::string& input_name() const;
  const std::string& output_name() const;
  const std::vector<OnnxInitializer>& initializers() const { return initializers_; }

  // The output [batch, output_width] for `input` [batch, input_width], with
  // every initializer's value from `parameters` (same names and shapes;
  // embedding tables as the rows of every id in the batch). Dropout drops
  // in kTrain only, with masks drawn from `seed`. The pointer is valid
  // until the next call. `input` and the parameters are read in place, not
  // copied: they must stay as they are until the Backward that follows.
  // InvalidArgument: a missing or misshapen parameter, input of the other
  // kind, an id without its row, or a batch size the graph's shapes cannot
  // take.
  absl::StatusOr<const float*> Forward(const ParameterView& parameters, int64_t batch,
                                       const float* input, PassMode mode, uint64_t seed);
  // The same for a graph whose input is ids: `ids` [batch, input_width].
  absl::StatusOr<const float*> Forward(const ParameterView& parameters, int64_t batch,
                                       absl::Span<const int64_t> ids, PassMode mode, uint64_t seed);

  // Given d(loss)/d(output) of the last Forward, writes the gradient of
  // every initializer into *gradients (accumulated there, in the buffers
  // Gradients::DenseBuffer and RowsBuffer lend; a table's as the rows the
  // Forward read). `parameters` are those of the Forward.
  absl::Status Backward(const ParameterView& parameters, const float* d_output,
                        Gradients* gradients);

  // Writes the graph again, for evaluation (Dropout as Identity), through
  // `graph` (common/model/onnx_graph.h): its initializers as the model's
  // variables (a table's Gathers as OnnxGraph::EmbeddingRows), its input
  // read from `input` [batch, input_width] (reshaped to the input's dims;
  // int64 for ids), at the graph's opset when above the interface's 17
  // (OnnxGraph::RequireOpset), so that nodes in the forms of opsets 18 to
  // 21 stay valid. Returns the output, reshaped to [batch, output_width].
  std::string Describe(OnnxGraph& graph, const std::string& input) const;

 private:
  using Plan = onnx_internal::Plan;

  OnnxProgram() = default;
  // `data_folder`: where external data is read from (DecodeOnnxTensor).
  static absl::StatusOr<std::unique_ptr<OnnxProgram>> FromModel(const onnx::ModelProto& model,
                                                                const std::string& origin,
                                                                const std::string& data_folder,
                                                                const std::string& output);
  absl::StatusOr<Plan*> PlanFor(int64_t batch);
  // Forward once the plan holds the input: binds the parameters and runs
  // the steps.
  absl::StatusOr<const float*> Run(Plan* plan, const ParameterView& parameters, PassMode mode,
                                   uint64_t seed);
  // Points the plan's value of parameter `p` at its values in
  // `parameters`; for a table, also maps the batch's ids to those rows.
  absl::Status BindParameter(Plan& plan, size_t p, const ParameterView& parameters) const;

  std::unique_ptr<onnx_internal::LoadedGraph> graph_;
  std::vector<OnnxInitializer> initializers_;
  int64_t input_width_ = 0;
  int64_t output_width_ = 0;
  std::map<int64_t, std::unique_ptr<Plan>> plans_;  // by batch size
  Plan* last_ = nullptr;                            // of the last Forward
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_PROGRAM_H_
