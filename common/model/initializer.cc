#include "common/model/initializer.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Fan-in and fan-out as Glorot defines them: [in, out] matrices, HWIO
// convolution kernels (receptive field times channels), and for an
// embedding table's rows, the row width both ways.
void Fans(const VariableSpec& spec, double* fan_in, double* fan_out) {
  const auto& dims = spec.shape().dims();
  if (spec.kind() == VARIABLE_KIND_EMBEDDING || dims.size() < 2) {
    const double width = dims.empty() ? 1 : dims[dims.size() - 1];
    *fan_in = *fan_out = width;
    return;
  }
  double receptive = 1;
  for (int i = 0; i + 2 < dims.size(); ++i) receptive *= dims[i];
  *fan_in = receptive * dims[dims.size() - 2];
  *fan_out = receptive * dims[dims.size() - 1];
}

absl::Status Fill(const VariableSpec& spec, uint64_t stream, float* values, int64_t count) {
  const InitializerSpec& init = spec.initializer();
  std::mt19937_64 rng(Mix(init.seed() ^ Mix(StableHash(spec.name()) ^ Mix(stream))));
  switch (init.kind()) {
    case INITIALIZER_KIND_UNSPECIFIED:
    case INITIALIZER_KIND_ZEROS:
      std::fill_n(values, count, 0.0f);
      return absl::OkStatus();
    case INITIALIZER_KIND_CONSTANT:
      std::fill_n(values, count, init.value());
      return absl::OkStatus();
    case INITIALIZER_KIND_UNIFORM: {
      if (!(init.min() < init.max())) {
        return absl::InvalidArgumentError(
            absl::StrCat("variable ", spec.name(), ": uniform initializer needs min < max"));
      }
      std::uniform_real_distribution<float> uniform(init.min(), init.max());
      for (int64_t i = 0; i < count; ++i) values[i] = uniform(rng);
      return absl::OkStatus();
    }
    case INITIALIZER_KIND_NORMAL:
    case INITIALIZER_KIND_TRUNCATED_NORMAL: {
      if (!(init.stddev() >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("variable ", spec.name(), ": normal initializer needs stddev >= 0"));
      }
      std::normal_distribution<float> normal(0.0f, 1.0f);
      const bool truncated = init.kind() == INITIALIZER_KIND_TRUNCATED_NORMAL;
      for (int64_t i = 0; i < count; ++i) {
        float z = normal(rng);
        while (truncated && std::abs(z) > 2) z = normal(rng);
        values[i] = init.mean() + init.stddev() * z;
      }
      return absl::OkStatus();
    }
    case INITIALIZER_KIND_GLOROT_UNIFORM: {
      double fan_in, fan_out;
      Fans(spec, &fan_in, &fan_out);
      const float limit = static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
      std::uniform_real_distribution<float> uniform(-limit, limit);
      for (int64_t i = 0; i < count; ++i) values[i] = uniform(rng);
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "variable ", spec.name(), ": unknown initializer kind ", static_cast<int>(init.kind())));
  }
}

}  // namespace

uint64_t StableHash(absl::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

absl::Status InitializeDense(const VariableSpec& spec, Tensor* tensor) {
  absl::StatusOr<Shape> shape = Shape::FromProto(spec.shape());
  if (!shape.ok()) return shape.status();
  if (tensor->dtype() != DATA_TYPE_FLOAT32 || tensor->shape() != *shape) {
    return absl::InvalidArgumentError(absl::StrCat("variable ", spec.name(), " is ",
                                                   tensor->DebugString(), ", expected float32 ",
                                                   shape->DebugString()));
  }
  return Fill(spec, /*stream=*/0, tensor->data<float>(), tensor->num_elements());
}

absl::Status InitializeEmbeddingRow(const VariableSpec& spec, int64_t id, float* row) {
  const auto& dims = spec.shape().dims();
  if (dims.size() != 2 || dims[1] <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("embedding table ", spec.name(), " needs shape [rows, dim]"));
  }
  return Fill(spec, static_cast<uint64_t>(id) + 1, row, dims[1]);
}

}  // namespace pstrain
