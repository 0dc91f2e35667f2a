#ifndef PSTRAIN_COMMON_ONNX_ONNX_EXTERNAL_DATA_H_
#define PSTRAIN_COMMON_ONNX_ONNX_EXTERNAL_DATA_H_

// ONNX tensors whose bytes live outside the model's file (data_location
// EXTERNAL): how graphs over protobuf's 2 GB limit are kept, and what
// onnx.save_model(..., save_as_external_data=True) writes for any graph.
// The tensor's external_data entries name a file (location, relative to the
// model's folder) and the bytes in it (offset; length, else to the file's
// end), little-endian as raw_data.
//
// A location must stay inside the model's folder: relative, with no ".."
// component, as ONNX's checker and ONNX Runtime require. A graph is read by
// every parameter server of the job, so without that a submitted graph
// could make them read any file they can open. Symbolic links in the folder
// are followed: whoever can place one there decides what the folder holds
// anyway, and caches that link every file to a content-addressed store
// (model hubs', Bazel's runfiles) are how models are often kept.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "onnx/onnx_pb.h"

namespace pstrain {

struct OnnxExternalLocation {
  std::string location;  // relative to the model's folder
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

// The tensor's external_data entries. InvalidArgument naming `what`: no
// location, a location that is absolute or has a ".." component, an offset
// or length that is not a non-negative integer, a key ONNX does not define
// (location, offset, length, checksum; the SHA-1 checksum is not verified).
absl::StatusOr<OnnxExternalLocation> ParseOnnxExternalLocation(const onnx::TensorProto& tensor,
                                                               const std::string& what);

// Sets the tensor's data location to EXTERNAL at `where`, replacing any
// entries and inline data it had.
void SetOnnxExternalLocation(const OnnxExternalLocation& where, onnx::TensorProto* tensor);

// The `bytes` bytes `tensor` keeps outside the file of a model in
// `model_folder`. InvalidArgument naming `what` and the file: as
// ParseOnnxExternalLocation; a folder; a length other than `bytes`, or a
// file too short for offset + `bytes`. NotFound: no such file. Other
// codes: from the Env.
absl::StatusOr<std::string> ReadOnnxExternalData(Env& env, const std::string& model_folder,
                                                 const onnx::TensorProto& tensor, int64_t bytes,
                                                 const std::string& what);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_ONNX_ONNX_EXTERNAL_DATA_H_
