// ParameterShard: reading values (pulls, snapshots).

#include "absl/strings/str_cat.h"
#include "common/placement/row_placement.h"
#include "common/status/status_macros.h"
#include "server/ps/parameter_shard.h"

namespace pstrain {

absl::Status ParameterShard::ValidateIds(const ShardVariable& v,
                                         absl::Span<const int64_t> ids) const {
  for (int64_t id : ids) {
    if (v.num_rows > 0 && (id < 0 || id >= v.num_rows)) {
      return absl::InvalidArgumentError(absl::StrCat("row id ", id, " of \"", v.spec.name(),
                                                     "\" is outside [0, ", v.num_rows, ")"));
    }
    if (v.embedding && num_shards() > 1 && RowShard(id, num_shards()) != shard_index()) {
      return absl::InvalidArgumentError(
          absl::StrCat("row id ", id, " of \"", v.spec.name(), "\" belongs to shard ",
                       RowShard(id, num_shards()), ", not ", shard_index()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParameterShard::CheckRange(int variable, int64_t offset, int64_t count) const {
  if (variable < 0 || variable >= num_variables()) {
    return absl::InvalidArgumentError(absl::StrCat("no variable #", variable));
  }
  const ShardVariable& v = *variables_[variable];
  if (v.embedding) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", v.spec.name(), "\" is an embedding table; read it by rows"));
  }
  if (offset < 0 || count < 0 || offset > v.num_elements || count > v.num_elements - offset) {
    return absl::InvalidArgumentError(absl::StrCat("elements [", offset, ", ", offset + count,
                                                   ") are outside \"", v.spec.name(), "\" of ",
                                                   v.num_elements, " elements"));
  }
  return absl::OkStatus();
}

absl::Status ParameterShard::ReadDense(int variable, int64_t offset, absl::Span<float> out) const {
  RETURN_IF_ERROR(CheckRange(variable, offset, static_cast<int64_t>(out.size())));
  variables_[variable]->dense->Read(offset, out);
  return absl::OkStatus();
}

absl::Status ParameterShard::ReadDenseBytes(int variable, int64_t offset, int64_t count,
                                            std::string* out) const {
  RETURN_IF_ERROR(CheckRange(variable, offset, count));
  variables_[variable]->dense->ReadBytes(offset, count, out);
  return absl::OkStatus();
}

absl::Status ParameterShard::ReadRows(int variable, absl::Span<const int64_t> ids,
                                      float* out) const {
  if (variable < 0 || variable >= num_variables()) {
    return absl::InvalidArgumentError(absl::StrCat("no variable #", variable));
  }
  const ShardVariable& v = *variables_[variable];
  if (!v.embedding && v.spec.shape().dims_size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", v.spec.name(), "\" is a scalar and has no rows"));
  }
  RETURN_IF_ERROR(ValidateIds(v, ids));
  if (v.embedding) {
    v.table->Lookup(ids, out);
  } else {
    v.dense->ReadRows(ids, out);
  }
  return absl::OkStatus();
}

}  // namespace pstrain
