#include "server/ps/pull_reader.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/tensor/bfloat16.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;

void SetShape(const ShardVariable& v, DenseTensor* t) {
  t->set_dtype(DATA_TYPE_FLOAT32);
  *t->mutable_shape() = v.spec.shape();
}

}  // namespace

absl::StatusOr<int64_t> ValidatePull(const ParameterShard& shard, const PullRequest& request) {
  if (request.min_version() < 0 || request.wait_ms() < 0) {
    return absl::InvalidArgumentError("min_version and wait_ms must be >= 0");
  }
  if (request.names_size() + request.rows_size() + request.ranges_size() == 0) {
    return absl::InvalidArgumentError("the pull names no variable");
  }
  if (request.dense_dtype() != DATA_TYPE_UNSPECIFIED &&
      request.dense_dtype() != DATA_TYPE_FLOAT32 && request.dense_dtype() != DATA_TYPE_BFLOAT16) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense_dtype ",
                     DataType_IsValid(request.dense_dtype()) ? DataType_Name(request.dense_dtype())
                                                             : absl::StrCat(request.dense_dtype()),
                     " is not one a pull answers in: DATA_TYPE_FLOAT32 or DATA_TYPE_BFLOAT16"));
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
  for (const RowSelection& sel : request.rows()) {
    ASSIGN_OR_RETURN(int index, shard.FindVariable(sel.name()));
    const ShardVariable& v = shard.variable(index);
    if (!v.embedding && v.spec.shape().dims_size() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", sel.name(), "\" is a scalar and has no rows"));
    }
    RETURN_IF_ERROR(shard.ValidateRowIds(index, sel.ids()));
    bytes += static_cast<int64_t>(sel.ids_size()) * v.row_width * kFloatBytes;
  }
  return bytes;
}

PullCursor::PullCursor(std::shared_ptr<const ParameterShard> shard, PullRequest request,
                       int64_t max_chunk_bytes)
    : shard_(std::move(shard)),
      request_(std::move(request)),
      max_chunk_bytes_(std::max<int64_t>(max_chunk_bytes, kFloatBytes)) {}

absl::StatusOr<int64_t> PullCursor::Fill(int64_t room, PullResponse* out,
                                         const ValueDestination& destination) {
  const ParameterShard& shard = *shard_;
  const int num_names = request_.names_size(), num_ranges = request_.ranges_size();
  if (item_ < num_names + num_ranges) {
    const bool whole = item_ < num_names;
    const std::string& name =
        whole ? request_.names(item_) : request_.ranges(item_ - num_names).name();
    ASSIGN_OR_RETURN(const int index, shard.FindVariable(name));
    const ShardVariable& v = shard.variable(index);
    int64_t begin = 0, end = v.num_elements;
    if (!whole) {
      const DenseRange& r = request_.ranges(item_ - num_names);
      begin = r.offset();
      end = r.offset() + r.count();
    }
    const int64_t from = begin + at_;
    DenseTensor* d = out->add_values()->mutable_dense();
    out->mutable_values(out->values_size() - 1)->set_name(name);
    SetShape(v, d);
    // bfloat16 when asked (PullRequest.dense_dtype), in the messages: a
    // lane's destination holds float32.
    const bool narrow = request_.dense_dtype() == DATA_TYPE_BFLOAT16;
    const int64_t element_bytes = narrow ? 2 : kFloatBytes;
    if (narrow) d->set_dtype(DATA_TYPE_BFLOAT16);
    int64_t n;
    if (whole && at_ == 0 && end * element_bytes <= room) {
      n = end;  // the whole variable, unchunked
    } else {
      n = std::min(end - from, std::max<int64_t>(1, room / element_bytes));
      d->mutable_chunk()->set_offset(from * element_bytes);
      d->mutable_chunk()->set_total_bytes(v.num_elements * element_bytes);
    }
    float* to = destination && !narrow ? destination(out->values_size() - 1, PieceKind::kDense, n)
                                       : nullptr;
    if (to != nullptr) {
      RETURN_IF_ERROR(shard.ReadDense(index, from, absl::MakeSpan(to, n)));
    } else if (narrow) {
      std::vector<float> values(n);
      RETURN_IF_ERROR(shard.ReadDense(index, from, absl::MakeSpan(values)));
      std::string* data = d->mutable_data();
      data->resize(n * element_bytes);
      NarrowToBfloat16(values, absl::MakeSpan(reinterpret_cast<uint16_t*>(data->data()), n));
    } else {
      RETURN_IF_ERROR(shard.ReadDenseBytes(index, from, n, d->mutable_data()));
    }
    at_ += n;
    if (from + n == end) {
      ++item_;
      at_ = 0;
    }
    return n * element_bytes;
  }
  const RowSelection& sel = request_.rows(item_ - num_names - num_ranges);
  ASSIGN_OR_RETURN(const int index, shard.FindVariable(sel.name()));
  const ShardVariable& v = shard.variable(index);
  const int64_t row_bytes = v.row_width * kFloatBytes;
  const int64_t n = std::min<int64_t>(sel.ids_size() - at_, std::max<int64_t>(1, room / row_bytes));
  NamedTensor* t = out->add_values();
  t->set_name(sel.name());
  SparseRows* rows = t->mutable_rows();
  rows->set_dtype(DATA_TYPE_FLOAT32);
  rows->set_row_width(v.row_width);
  const absl::Span<const int64_t> ids = absl::MakeConstSpan(sel.ids().data() + at_, n);
  rows->mutable_ids()->Add(ids.begin(), ids.end());
  float* to = destination ? destination(out->values_size() - 1, PieceKind::kRows, n * v.row_width)
                          : nullptr;
  if (to == nullptr) {
    std::string* values = rows->mutable_values();
    values->resize(n * row_bytes);
    to = reinterpret_cast<float*>(values->data());
  }
  RETURN_IF_ERROR(shard.ReadRows(index, ids, to));
  at_ += n;
  if (at_ >= sel.ids_size()) {
    ++item_;
    at_ = 0;
  }
  return std::max<int64_t>(n * row_bytes, 1);
}

absl::Status PullCursor::Next(PullResponse* out, const ValueDestination& destination) {
  out->Clear();
  out->set_version(shard_->version());
  const int items = request_.names_size() + request_.ranges_size() + request_.rows_size();
  int64_t used = 0;
  while (item_ < items && used < max_chunk_bytes_) {
    ASSIGN_OR_RETURN(const int64_t n, Fill(max_chunk_bytes_ - used, out, destination));
    used += n;
  }
  done_ = item_ >= items;
  out->set_end_of_pull(done_);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PullResponse>> ReadPull(std::shared_ptr<const ParameterShard> shard,
                                                   const PullRequest& request,
                                                   int64_t max_chunk_bytes) {
  PullCursor cursor(std::move(shard), request, max_chunk_bytes);
  std::vector<PullResponse> out;
  while (!cursor.done()) RETURN_IF_ERROR(cursor.Next(&out.emplace_back()));
  return out;
}

int64_t InlineValueBytes(const PullResponse& response) {
  int64_t n = 0;
  for (const NamedTensor& t : response.values()) {
    n += t.has_dense() ? static_cast<int64_t>(t.dense().data().size())
                       : static_cast<int64_t>(t.rows().values().size());
  }
  return n;
}

absl::Time PullDeadline(absl::Time now, const PullRequest& request, absl::Duration max_wait) {
  return now + std::min(absl::Milliseconds(request.wait_ms()), max_wait);
}

}  // namespace pstrain
