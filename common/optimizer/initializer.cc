#include "common/optimizer/initializer.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/onnx/onnx_file.h"
#include "common/random/split_mix.h"

namespace pstrain {
namespace {

// FNV-1a: stable across processes and builds, unlike absl::Hash.
uint64_t HashName(absl::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// A uniform double in (0, 1), never 0 (Box-Muller takes its log).
double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

constexpr double kTwoPi = 6.283185307179586;

}  // namespace

absl::Status ValidateInitializer(const InitializerSpec& spec) {
  switch (spec.kind()) {
    case INITIALIZER_KIND_UNSPECIFIED:
    case INITIALIZER_KIND_ZEROS:
    case INITIALIZER_KIND_GLOROT_UNIFORM:
      return absl::OkStatus();
    case INITIALIZER_KIND_CONSTANT:
      if (!std::isfinite(spec.value())) {
        return absl::InvalidArgumentError("initializer.value must be finite");
      }
      return absl::OkStatus();
    case INITIALIZER_KIND_UNIFORM:
      if (!std::isfinite(spec.min()) || !std::isfinite(spec.max()) || !(spec.min() < spec.max())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "initializer.min (", spec.min(), ") must be below initializer.max (", spec.max(), ")"));
      }
      return absl::OkStatus();
    case INITIALIZER_KIND_NORMAL:
    case INITIALIZER_KIND_TRUNCATED_NORMAL:
      if (!std::isfinite(spec.mean()) || !std::isfinite(spec.stddev()) || spec.stddev() < 0) {
        return absl::InvalidArgumentError(
            "initializer.mean must be finite and initializer.stddev finite and >= 0");
      }
      return absl::OkStatus();
    case INITIALIZER_KIND_ONNX_TENSOR:
      if (spec.onnx_path().empty() || spec.onnx_tensor().empty()) {
        return absl::InvalidArgumentError(
            "initializer.onnx_path and initializer.onnx_tensor are required for "
            "INITIALIZER_KIND_ONNX_TENSOR");
      }
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("initializer.kind ", static_cast<int>(spec.kind()), " is unknown"));
  }
}

Initializer::Initializer(const InitializerSpec& spec, uint64_t job_seed, absl::string_view name,
                         absl::Span<const int64_t> shape)
    : kind_(spec.kind() == INITIALIZER_KIND_UNSPECIFIED ? INITIALIZER_KIND_ZEROS : spec.kind()),
      seed_(SplitMix64(SplitMix64(job_seed) ^ SplitMix64(spec.seed() + 0x632be59bd9b4e019ull) ^
                       HashName(name))) {
  switch (kind_) {
    case INITIALIZER_KIND_CONSTANT:
      a_ = spec.value();
      break;
    case INITIALIZER_KIND_UNIFORM:
      a_ = spec.min();
      b_ = spec.max();
      break;
    case INITIALIZER_KIND_NORMAL:
    case INITIALIZER_KIND_TRUNCATED_NORMAL:
      a_ = spec.mean();
      b_ = spec.stddev();
      break;
    case INITIALIZER_KIND_GLOROT_UNIFORM: {
      double fan_in = 1, fan_out = 1;
      if (shape.size() == 1) {
        fan_in = fan_out = static_cast<double>(shape[0]);
      } else if (shape.size() >= 2) {
        double receptive = 1;
        for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
        const int64_t rows = shape[shape.size() - 2];
        const int64_t cols = shape[shape.size() - 1];
        fan_in = static_cast<double>(rows > 0 ? rows : cols) * receptive;
        fan_out = static_cast<double>(cols) * receptive;
      }
      const double limit = std::sqrt(6.0 / std::max(1.0, fan_in + fan_out));
      a_ = static_cast<float>(-limit);
      b_ = static_cast<float>(limit);
      break;
    }
    default:
      break;
  }
}

absl::StatusOr<Initializer> Initializer::ForVariable(const VariableSpec& spec, uint64_t job_seed) {
  if (absl::Status valid = ValidateInitializer(spec.initializer()); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("variable \"", spec.name(), "\": ", valid.message()));
  }
  const std::vector<int64_t> shape(spec.shape().dims().begin(), spec.shape().dims().end());
  Initializer init(spec.initializer(), job_seed, spec.name(), shape);
  if (init.kind_ != INITIALIZER_KIND_ONNX_TENSOR) return init;
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("variable \"", spec.name(), "\": ", why));
  };
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  if (elements <= 0) return fail("a dynamic table has no fixed rows to take from an ONNX file");
  absl::StatusOr<std::vector<float>> values =
      ReadOnnxInitializer(spec.initializer().onnx_path(), spec.initializer().onnx_tensor());
  if (!values.ok()) {
    return absl::Status(values.status().code(), absl::StrCat("variable \"", spec.name(),
                                                             "\": ", values.status().message()));
  }
  if (static_cast<int64_t>(values->size()) != elements) {
    return fail(absl::StrCat(spec.initializer().onnx_path(), ": initializer ",
                             spec.initializer().onnx_tensor(), " holds ", values->size(),
                             " values; the variable has ", elements));
  }
  init.values_ = std::make_shared<const std::vector<float>>(*std::move(values));
  return init;
}

float Initializer::Draw(uint64_t stream, uint64_t index) const {
  const uint64_t base = SplitMix64(stream ^ SplitMix64(index));
  switch (kind_) {
    case INITIALIZER_KIND_CONSTANT:
      return a_;
    case INITIALIZER_KIND_UNIFORM:
    case INITIALIZER_KIND_GLOROT_UNIFORM: {
      const float u = static_cast<float>(Unit(base));
      const float v = a_ + (b_ - a_) * u;
      return v < b_ ? v : a_;  // [min, max) even after rounding
    }
    case INITIALIZER_KIND_NORMAL:
    case INITIALIZER_KIND_TRUNCATED_NORMAL: {
      // Box-Muller over successive draws of the element's own stream;
      // truncated normal redraws beyond two standard deviations.
      for (uint64_t attempt = 0;; ++attempt) {
        const double u1 = Unit(SplitMix64(base + 2 * attempt));
        const double u2 = Unit(SplitMix64(base + 2 * attempt + 1));
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
        if (kind_ == INITIALIZER_KIND_NORMAL || std::abs(z) <= 2.0) {
          return a_ + b_ * static_cast<float>(z);
        }
        if (attempt >= 64) return a_;  // 2^-300 likely; keeps the loop bounded
      }
    }
    default:
      return 0.0f;
  }
}

void Initializer::FillDense(int64_t offset, absl::Span<float> out) const {
  if (kind_ == INITIALIZER_KIND_ONNX_TENSOR) {
    CopyValues(offset, out);
    return;
  }
  if (kind_ == INITIALIZER_KIND_ZEROS || kind_ == INITIALIZER_KIND_CONSTANT) {
    for (float& v : out) v = a_;
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = Draw(seed_, static_cast<uint64_t>(offset) + i);
  }
}

void Initializer::FillRow(int64_t id, absl::Span<float> out) const {
  if (kind_ == INITIALIZER_KIND_ONNX_TENSOR) {
    CopyValues(id * static_cast<int64_t>(out.size()), out);
    return;
  }
  if (kind_ == INITIALIZER_KIND_ZEROS || kind_ == INITIALIZER_KIND_CONSTANT) {
    for (float& v : out) v = a_;
    return;
  }
  const uint64_t stream =
      SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(id) + 0x5851f42d4c957f2dull));
  for (size_t i = 0; i < out.size(); ++i) out[i] = Draw(stream, i);
}

void Initializer::CopyValues(int64_t offset, absl::Span<float> out) const {
  const int64_t held = values_ == nullptr ? 0 : static_cast<int64_t>(values_->size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t at = offset + static_cast<int64_t>(i);
    out[i] = at >= 0 && at < held ? (*values_)[at] : 0.0f;
  }
}

}  // namespace pstrain
