#include "server/ps/shard_variable.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/optimizer/initializer.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int kMaxNameLength = 128;

}  // namespace

absl::Status ValidateName(absl::string_view field, absl::string_view name, bool allow_slash) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must have 1 to ", kMaxNameLength, " characters"));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || (allow_slash && c == '/');
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(field, " \"", absl::CEscape(name),
                                                     "\" has a character outside [A-Za-z0-9_.",
                                                     allow_slash ? "/" : "", "-]"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ShardVariable>> MakeShardVariable(const VariableSpec& spec,
                                                                 const std::string& field,
                                                                 uint64_t job_seed,
                                                                 const Optimizer& optimizer,
                                                                 int64_t granted_budget) {
  RETURN_IF_ERROR(ValidateName(field + ".name", spec.name(), true));
  if (spec.dtype() != DATA_TYPE_FLOAT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".dtype must be DATA_TYPE_FLOAT32, got ", DataType_Name(spec.dtype())));
  }
  auto v = std::make_unique<ShardVariable>();
  v->spec = spec;
  std::vector<int64_t> shape(spec.shape().dims().begin(), spec.shape().dims().end());
  switch (spec.kind()) {
    case VARIABLE_KIND_DENSE: {
      if (spec.has_embedding()) {
        return absl::InvalidArgumentError(field + ".embedding is for embedding tables only");
      }
      int64_t n = 1;
      for (int64_t d : shape) {
        if (d <= 0 || d > (int64_t{1} << 40)) {
          return absl::InvalidArgumentError(
              absl::StrCat(field, ".shape has dim ", d, "; dense dims must be > 0"));
        }
        n *= d;
        if (n > (int64_t{1} << 34)) {
          return absl::InvalidArgumentError(absl::StrCat(field, ".shape is too large"));
        }
      }
      v->num_elements = n;
      v->num_rows = shape.empty() ? 1 : shape[0];
      v->row_width = n / v->num_rows;
      ASSIGN_OR_RETURN(const Initializer init, Initializer::ForVariable(spec, job_seed));
      v->dense = std::make_unique<DenseVariable>(spec.name(), shape, init, optimizer);
      return v;
    }
    case VARIABLE_KIND_EMBEDDING: {
      if (shape.size() != 2 || shape[0] < 0 || shape[1] <= 0 || shape[1] > (1 << 20)) {
        return absl::InvalidArgumentError(
            field + ".shape must be [vocabulary_size >= 0, 0 < dim <= 2^20] for a table");
      }
      const EmbeddingSpec& e = spec.embedding();
      if (e.vocabulary_size() != 0 && e.vocabulary_size() != shape[0]) {
        return absl::InvalidArgumentError(field +
                                          ".embedding.vocabulary_size disagrees with shape[0]");
      }
      if (e.dim() != 0 && e.dim() != shape[1]) {
        return absl::InvalidArgumentError(field + ".embedding.dim disagrees with shape[1]");
      }
      if (e.admit_after() < 0 || e.max_bytes_per_shard() < 0) {
        return absl::InvalidArgumentError(
            field + ".embedding.admit_after and max_bytes_per_shard must be >= 0");
      }
      const bool dynamic = shape[0] == 0;
      if (!dynamic && (e.admit_after() > 1 || e.max_bytes_per_shard() > 0)) {
        return absl::InvalidArgumentError(
            field +
            ".embedding: admit_after and max_bytes_per_shard are for dynamic tables "
            "(vocabulary_size 0) only");
      }
      EmbeddingTableOptions options;
      options.dim = shape[1];
      options.vocabulary_size = shape[0];
      options.admit_after = AdmitAfterOf(e);
      options.max_bytes = e.max_bytes_per_shard() > 0 ? e.max_bytes_per_shard() : granted_budget;
      const int64_t row_bytes = options.dim * (1 + optimizer.num_slots()) * 4;
      if (options.max_bytes > 0 && options.max_bytes < row_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".embedding.max_bytes_per_shard (", options.max_bytes,
                         ") cannot hold one row with its optimizer slots (", row_bytes, " bytes)"));
      }
      ASSIGN_OR_RETURN(Initializer init, Initializer::ForVariable(spec, job_seed));
      v->embedding = true;
      v->num_rows = shape[0];
      v->row_width = shape[1];
      v->table = std::make_unique<EmbeddingTable>(spec.name(), options, std::move(init), optimizer);
      return v;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".kind must be VARIABLE_KIND_DENSE or VARIABLE_KIND_EMBEDDING"));
  }
}

}  // namespace pstrain
