#ifndef PSTRAIN_COMMON_OPTIMIZER_INITIALIZER_H_
#define PSTRAIN_COMMON_OPTIMIZER_INITIALIZER_H_

// Initial values of variables, drawn the same way by the parameter servers
// and by the single-process trainer. Every value is a pure function of (job
// seed, initializer seed, variable name, element index) -- for embedding
// rows, of the row id and the index within the row -- so a job starts from
// the same parameters whatever the number of shards, whichever shard holds a
// row, and whether it runs distributed or in one process. An imported ONNX
// graph's variables instead start from the graph's own values, read from its
// file.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// InvalidArgument (naming the field) for a spec that cannot be drawn from:
// a non-finite constant, uniform with min >= max, a negative or non-finite
// stddev, an unknown kind.
absl::Status ValidateInitializer(const InitializerSpec& spec);

// Draws a variable's initial values. Immutable and thread-safe.
//
// Uniform draws lie in [min, max); normal draws use Box-Muller over the
// element's own random stream; truncated normal redraws beyond two standard
// deviations; Glorot uniform draws from [-l, l) with
// l = sqrt(6 / (fan_in + fan_out)).
class Initializer {
 public:
  // `shape` gives Glorot's fan-in and fan-out (Keras' rule: the last two
  // dims times the product of the others; a 1-D shape's only dim both ways;
  // a dynamic table's 0 rows counts as its width). `spec` must have passed
  // ValidateInitializer and not be INITIALIZER_KIND_ONNX_TENSOR, whose file
  // only ForVariable reads (constructed here, it gives zeros).
  Initializer(const InitializerSpec& spec, uint64_t job_seed, absl::string_view name,
              absl::Span<const int64_t> shape);

  // The initializer of `spec` (its initializer, name and shape) in a job
  // seeded with `job_seed` (TrainingSpec.seed). For
  // INITIALIZER_KIND_ONNX_TENSOR it reads the tensor's values from the file
  // now (one parse of the file per variable). Errors name the variable:
  // InvalidArgument as ValidateInitializer, or a tensor that is not float32,
  // not finite, of another size than the variable, or for a dynamic table;
  // NotFound: no such file or tensor.
  static absl::StatusOr<Initializer> ForVariable(const VariableSpec& spec, uint64_t job_seed);

  // Elements [offset, offset + out.size()) of a dense variable, in
  // row-major order.
  void FillDense(int64_t offset, absl::Span<float> out) const;

  // Row `id` of an embedding table (out.size() is the row width).
  void FillRow(int64_t id, absl::Span<float> out) const;

 private:
  float Draw(uint64_t stream, uint64_t index) const;
  // Elements [offset, offset + out.size()) of values_ (zeros beyond).
  void CopyValues(int64_t offset, absl::Span<float> out) const;

  InitializerKind kind_;
  float a_ = 0;  // constant value, uniform min, normal mean
  float b_ = 0;  // uniform max, normal stddev
  uint64_t seed_ = 0;
  // INITIALIZER_KIND_ONNX_TENSOR: the tensor, shared by copies (a table
  // keeps its initializer for the rows it creates later).
  std::shared_ptr<const std::vector<float>> values_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_INITIALIZER_H_
