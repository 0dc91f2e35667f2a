#ifndef PSTRAIN_COMMON_MODEL_INITIALIZER_H_
#define PSTRAIN_COMMON_MODEL_INITIALIZER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "common/tensor/tensor.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// Fills *tensor (float32, of the variable's shape) with the initial value of
// a dense variable. The values depend only on the spec (its initializer, its
// seed and its name), never on where or when it runs, so every shard and
// every restart computes the same ones.
// InvalidArgument: an unknown initializer kind, a tensor of another shape or
// dtype, or parameters out of range (min >= max, stddev < 0).
absl::Status InitializeDense(const VariableSpec& spec, Tensor* tensor);

// Fills `row` (spec.embedding dim floats) with the initial value of row `id`
// of an embedding table; it depends only on the spec and the id, so a row
// created on demand on any shard gets the same value.
absl::Status InitializeEmbeddingRow(const VariableSpec& spec, int64_t id, float* row);

// A name's stable 64-bit hash (FNV-1a), for seeding.
uint64_t StableHash(absl::string_view name);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_INITIALIZER_H_
