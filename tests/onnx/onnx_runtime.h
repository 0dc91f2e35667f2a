#ifndef PSTRAIN_TESTS_ONNX_ONNX_RUNTIME_H_
#define PSTRAIN_TESTS_ONNX_ONNX_RUNTIME_H_

// Runs ONNX models in the real ONNX Runtime (npm onnxruntime-node, CPU, in a
// `node` child process) so tests can check pstrain's exported models against
// it. scripts/setup.sh installs Node and tests/onnx/node_modules.
//
//   ASSIGN_OR_RETURN(auto outputs,
//                    RunInOnnxRuntime(model_path, {{"x", OnnxTensor::Float({2, 3}, values)}}));
//   const OnnxTensor& y = outputs.at("y");

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pstrain {

// A tensor crossing to and from ONNX Runtime: float32 or int64, row-major.
// The values live in `floats` or `ints`, whichever `type` says; the other
// stays empty.
struct OnnxTensor {
  enum class ElementType { kFloat32, kInt64 };

  static OnnxTensor Float(std::vector<int64_t> dims, std::vector<float> values);
  static OnnxTensor Int64(std::vector<int64_t> dims, std::vector<int64_t> values);

  bool is_int64() const { return type == ElementType::kInt64; }
  // The product of `dims` (1 for a scalar).
  int64_t num_elements() const;
  // How many values the tensor holds (floats.size() or ints.size()).
  int64_t num_values() const;

  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// Runs the ONNX model at `model_path` in ONNX Runtime on `inputs` (by graph
// input name; every input shares dim 0, the batch), `rows_per_run` examples
// per session run, and returns every graph output by name, concatenated
// along dim 0. Blocks until node ends (at most 10 minutes). Inputs and
// outputs cross as files in a fresh folder under TEST_TMPDIR (or /tmp),
// removed on success and kept on failure for a rerun by hand.
//
// NotFound: `model_path` does not exist.
// InvalidArgument: `rows_per_run` is not positive, an input's values do not
//   match its dims or its name cannot be a file name; or the model failed to
//   load or run, or an input is missing or wrong (the message carries node's
//   stderr, which names the model, input or output at fault).
// FailedPrecondition: node, run_onnx_model.js or onnxruntime-node is not
//   there (run scripts/setup.sh; the caller needs this library's data).
// DeadlineExceeded: node ran for 10 minutes; it has been killed.
// Internal: the temporary files could not be written or read, or node died
//   from a signal.
absl::StatusOr<std::map<std::string, OnnxTensor>> RunInOnnxRuntime(
    const std::string& model_path, const std::map<std::string, OnnxTensor>& inputs,
    int64_t rows_per_run = 1000);

// Runs the Node script `script` (a path in the workspace, a data dependency
// of the caller) with `args`, onnxruntime-node on its module path, and
// returns what it printed (stdout and stderr). Errors as RunInOnnxRuntime's,
// naming the script.
absl::StatusOr<std::string> RunNodeScript(const std::string& script,
                                          const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_TESTS_ONNX_ONNX_RUNTIME_H_
