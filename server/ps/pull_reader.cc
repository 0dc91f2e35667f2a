#include "server/ps/pull_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;

void SetShape(const ShardVariable& v, DenseTensor* t) {
  t->set_dtype(DATA_TYPE_FLOAT32);
  *t->mutable_shape() = v.spec.shape();
}

// Packs pieces into messages of at most `budget` bytes of values.
class Packer {
 public:
  Packer(int64_t version, int64_t budget) : version_(version), budget_(budget) { Next(); }

  // Room left in the current message; starts a new one when it is full.
  int64_t Room() {
    if (used_ >= budget_) Next();
    return budget_ - used_;
  }
  NamedTensor* Add(const std::string& name, int64_t bytes) {
    used_ += bytes;
    NamedTensor* t = out_.back().add_values();
    t->set_name(name);
    return t;
  }
  std::vector<PullResponse> Finish() {
    if (out_.size() > 1 && out_.back().values_size() == 0) out_.pop_back();
    out_.back().set_end_of_pull(true);
    return std::move(out_);
  }

 private:
  void Next() {
    out_.emplace_back().set_version(version_);
    used_ = 0;
  }

  const int64_t version_;
  const int64_t budget_;
  std::vector<PullResponse> out_;
  int64_t used_ = 0;
};

}  // namespace

absl::StatusOr<int64_t> ValidatePull(const ParameterShard& shard, const PullRequest& request) {
  if (request.min_version() < 0 || request.wait_ms() < 0) {
    return absl::InvalidArgumentError("min_version and wait_ms must be >= 0");
  }
  if (request.names_size() + request.rows_size() + request.ranges_size() == 0) {
    return absl::InvalidArgumentError("the pull names no variable");
  }
  int64_t bytes = 0;
  for (const std::string& name : request.names()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(name));
    const ShardVariable& v = shard.variable(index);
    if (v.embedding) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", name, "\" is an embedding table; read its rows with a RowSelection"));
    }
    bytes += v.num_elements * kFloatBytes;
  }
  for (const DenseRange& range : request.ranges()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(range.name()));
    const ShardVariable& v = shard.variable(index);
    if (v.embedding || range.offset() < 0 || range.count() <= 0 ||
        range.offset() > v.num_elements || range.count() > v.num_elements - range.offset()) {
      return absl::InvalidArgumentError(
          absl::StrCat("range [", range.offset(), ", +", range.count(), ") of \"", range.name(),
                       "\" is not a non-empty part of a dense variable of ",
                       v.embedding ? 0 : v.num_elements, " elements"));
    }
    bytes += range.count() * kFloatBytes;
  }
  std::vector<float> scratch;
  for (const RowSelection& sel : request.rows()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(sel.name()));
    const ShardVariable& v = shard.variable(index);
    if (!v.embedding && v.spec.shape().dims_size() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", sel.name(), "\" is a scalar and has no rows"));
    }
    // Validates the ids (range, shard) by reading none of them.
    for (int64_t id : sel.ids()) {
      if (v.num_rows > 0 && (id < 0 || id >= v.num_rows)) {
        return absl::InvalidArgumentError(absl::StrCat("row id ", id, " of \"", sel.name(),
                                                       "\" is outside [0, ", v.num_rows, ")"));
      }
    }
    bytes += static_cast<int64_t>(sel.ids_size()) * v.row_width * kFloatBytes;
  }
  return bytes;
}

absl::StatusOr<std::vector<PullResponse>> ReadPull(const ParameterShard& shard,
                                                   const PullRequest& request, int64_t version,
                                                   int64_t max_chunk_bytes) {
  Packer packer(version, std::max<int64_t>(max_chunk_bytes, kFloatBytes));
  // A dense read of elements [begin, end) of `v`, chunked when it does not
  // fit; `whole` pieces carry no chunk.
  auto dense = [&](int index, int64_t begin, int64_t end, bool whole) -> absl::Status {
    const ShardVariable& v = shard.variable(index);
    const int64_t total = v.num_elements * kFloatBytes;
    if (whole && end * kFloatBytes <= packer.Room()) {
      NamedTensor* t = packer.Add(v.spec.name(), total);
      SetShape(v, t->mutable_dense());
      return shard.ReadDenseBytes(index, 0, end, t->mutable_dense()->mutable_data());
    }
    for (int64_t at = begin; at < end;) {
      const int64_t n = std::min(end - at, std::max<int64_t>(1, packer.Room() / kFloatBytes));
      NamedTensor* t = packer.Add(v.spec.name(), n * kFloatBytes);
      DenseTensor* d = t->mutable_dense();
      SetShape(v, d);
      d->mutable_chunk()->set_offset(at * kFloatBytes);
      d->mutable_chunk()->set_total_bytes(total);
      RETURN_IF_ERROR(shard.ReadDenseBytes(index, at, n, d->mutable_data()));
      at += n;
    }
    return absl::OkStatus();
  };
  for (const std::string& name : request.names()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(name));
    RETURN_IF_ERROR(dense(index, 0, shard.variable(index).num_elements, true));
  }
  for (const DenseRange& range : request.ranges()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(range.name()));
    RETURN_IF_ERROR(dense(index, range.offset(), range.offset() + range.count(), false));
  }
  for (const RowSelection& sel : request.rows()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(sel.name()));
    const ShardVariable& v = shard.variable(index);
    const int64_t row_bytes = v.row_width * kFloatBytes;
    for (int64_t at = 0; at < sel.ids_size() || (at == 0 && sel.ids_size() == 0);) {
      const int64_t n =
          std::min<int64_t>(sel.ids_size() - at, std::max<int64_t>(1, packer.Room() / row_bytes));
      NamedTensor* t = packer.Add(sel.name(), n * row_bytes);
      SparseRows* rows = t->mutable_rows();
      rows->set_dtype(DATA_TYPE_FLOAT32);
      rows->set_row_width(v.row_width);
      rows->mutable_ids()->Add(sel.ids().begin() + at, sel.ids().begin() + at + n);
      std::string* values = rows->mutable_values();
      values->resize(n * row_bytes);
      RETURN_IF_ERROR(shard.ReadRows(index, absl::MakeConstSpan(sel.ids().data() + at, n),
                                     reinterpret_cast<float*>(values->data())));
      at += n;
      if (n == 0) break;
    }
  }
  return packer.Finish();
}

}  // namespace pstrain
