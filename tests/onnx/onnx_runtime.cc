#include "tests/onnx/onnx_runtime.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/process/child_process.h"
#include "common/status/status_macros.h"
#include "tests/node_script.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;

constexpr char kScript[] = "tests/onnx/run_onnx_model.js";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::Status WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeRunFolder() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/onnx_run_XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a folder like ", pattern, ": ", std::strerror(errno)));
  }
  std::error_code error;
  fs::create_directory(pattern + "/in", error);
  if (!error) fs::create_directory(pattern + "/out", error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot fill ", pattern, ": ", error.message()));
  }
  return pattern;
}

// Names become file names; ONNX allows names that cannot be one.
absl::Status CheckInput(const std::string& name, const OnnxTensor& tensor) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("input name \"", name, "\" cannot be passed to ONNX Runtime as a file name"));
  }
  for (int64_t dim : tensor.dims) {
    if (dim < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input \"", name, "\" has a negative dim: [",
                                                     absl::StrJoin(tensor.dims, ", "), "]"));
    }
  }
  const size_t unused = tensor.is_int64() ? tensor.floats.size() : tensor.ints.size();
  if (tensor.num_values() != tensor.num_elements() || unused != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input \"", name, "\" has dims [", absl::StrJoin(tensor.dims, ", "), "] (",
                     tensor.num_elements(), " values) but ", tensor.floats.size(), " floats and ",
                     tensor.ints.size(), " int64s"));
  }
  return absl::OkStatus();
}

// Writes a tensor that passed CheckInput as the script reads it.
absl::Status WriteInput(const std::string& dir, const std::string& name, const OnnxTensor& tensor) {
  const std::string base = absl::StrCat(dir, "/", name);
  const std::string shape = absl::StrCat(absl::StrJoin(tensor.dims, " "), "\n");
  RETURN_IF_ERROR(WriteFile(base + ".shape", shape.data(), shape.size()));
  // Raw host-order values: the script reads little-endian, as x86-64 is.
  if (tensor.is_int64()) {
    return WriteFile(base + ".i64", tensor.ints.data(), tensor.ints.size() * sizeof(int64_t));
  }
  return WriteFile(base + ".f32", tensor.floats.data(), tensor.floats.size() * sizeof(float));
}

absl::StatusOr<std::vector<int64_t>> ReadShape(const std::string& path) {
  std::vector<int64_t> dims;
  for (absl::string_view word :
       absl::StrSplit(ReadFile(path), absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(word, &dim) || dim < 0) {
      return absl::InternalError(absl::StrCat(path, ": \"", word, "\" is not a dim"));
    }
    dims.push_back(dim);
  }
  return dims;
}

// Reads output `name` as the script wrote it: NAME.shape and NAME.f32 or
// NAME.i64.
absl::StatusOr<OnnxTensor> ReadOutput(const std::string& dir, const std::string& name) {
  const std::string base = absl::StrCat(dir, "/", name);
  OnnxTensor tensor;
  ASSIGN_OR_RETURN(tensor.dims, ReadShape(base + ".shape"));
  tensor.type = fs::exists(base + ".i64") ? OnnxTensor::ElementType::kInt64
                                          : OnnxTensor::ElementType::kFloat32;
  const std::string data_path = base + (tensor.is_int64() ? ".i64" : ".f32");
  const std::string bytes = ReadFile(data_path);
  const size_t element_size = tensor.is_int64() ? sizeof(int64_t) : sizeof(float);
  if (bytes.size() != static_cast<size_t>(tensor.num_elements()) * element_size) {
    return absl::InternalError(absl::StrCat(data_path, " has ", bytes.size(), " bytes, not ",
                                            tensor.num_elements(), " values"));
  }
  if (tensor.is_int64()) {
    tensor.ints.resize(tensor.num_elements());
    std::memcpy(tensor.ints.data(), bytes.data(), bytes.size());
  } else {
    tensor.floats.resize(tensor.num_elements());
    std::memcpy(tensor.floats.data(), bytes.data(), bytes.size());
  }
  return tensor;
}

// Every NAME.shape in `dir` is one graph output.
absl::StatusOr<std::map<std::string, OnnxTensor>> ReadOutputs(const std::string& dir) {
  std::map<std::string, OnnxTensor> outputs;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".shape") continue;
    const std::string name = entry.path().stem().string();
    ASSIGN_OR_RETURN(outputs[name], ReadOutput(dir, name));
  }
  if (error) return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", error.message()));
  return outputs;
}

}  // namespace

OnnxTensor OnnxTensor::Float(std::vector<int64_t> dims, std::vector<float> values) {
  OnnxTensor tensor;
  tensor.type = ElementType::kFloat32;
  tensor.dims = std::move(dims);
  tensor.floats = std::move(values);
  return tensor;
}

OnnxTensor OnnxTensor::Int64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  OnnxTensor tensor;
  tensor.type = ElementType::kInt64;
  tensor.dims = std::move(dims);
  tensor.ints = std::move(values);
  return tensor;
}

int64_t OnnxTensor::num_elements() const {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return count;
}

int64_t OnnxTensor::num_values() const {
  return static_cast<int64_t>(is_int64() ? ints.size() : floats.size());
}

absl::StatusOr<std::map<std::string, OnnxTensor>> RunInOnnxRuntime(
    const std::string& model_path, const std::map<std::string, OnnxTensor>& inputs,
    int64_t rows_per_run) {
  if (!fs::exists(model_path)) {
    return absl::NotFoundError(absl::StrCat("ONNX model ", model_path, " does not exist"));
  }
  if (rows_per_run <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rows_per_run must be positive, not ", rows_per_run));
  }
  for (const auto& [name, tensor] : inputs) RETURN_IF_ERROR(CheckInput(name, tensor));
  ASSIGN_OR_RETURN(const std::string dir, MakeRunFolder());
  for (const auto& [name, tensor] : inputs) {
    RETURN_IF_ERROR(WriteInput(dir + "/in", name, tensor));
  }
  absl::Status ran =
      RunNodeScript(kScript, {model_path, dir + "/in", dir + "/out", absl::StrCat(rows_per_run)})
          .status();
  if (!ran.ok()) {
    return absl::Status(ran.code(), absl::StrCat(ran.message(), "(inputs kept in ", dir, ")"));
  }
  ASSIGN_OR_RETURN(auto outputs, ReadOutputs(dir + "/out"));
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return outputs;
}

absl::StatusOr<std::string> RunNodeScript(const std::string& script,
                                          const std::vector<std::string>& args) {
  NodeScript node;
  node.script = script;
  // tests/onnx/node_modules (see WORKSPACE).
  node.node_modules_repository = "onnxruntime_node";
  node.required_package = "onnxruntime-node";
  return RunNodeScript(node, args);
}

}  // namespace pstrain
