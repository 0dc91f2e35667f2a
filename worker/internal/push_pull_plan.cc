#include "worker/internal/push_pull_plan.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/piece/dense_piece.h"
#include "common/piece/rows_piece.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

constexpr int64_t kFloatBytes = 4;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How many streams a shard's transfer of `bytes` uses.
int LanesFor(int64_t bytes, int max_lanes, int64_t parallel_min_bytes) {
  if (max_lanes <= 1 || bytes <= parallel_min_bytes || parallel_min_bytes <= 0) return 1;
  return static_cast<int>(std::min<int64_t>(max_lanes, CeilDiv(bytes, parallel_min_bytes)));
}

template <typename T>
size_t LeastLoaded(const std::vector<T>& lanes) {
  size_t best = 0;
  for (size_t i = 1; i < lanes.size(); ++i) {
    if (lanes[i].bytes < lanes[best].bytes) best = i;
  }
  return best;
}

const std::vector<int32_t>& NoPositions() {
  static const std::vector<int32_t>* const kNone = new std::vector<int32_t>();
  return *kNone;
}

const std::vector<int32_t>& PositionsOn(const RowPositions& positions, const std::string& name,
                                        int shard) {
  auto it = positions.find(name);
  if (it == positions.end() || shard >= static_cast<int>(it->second.size())) return NoPositions();
  return it->second[shard];
}

struct Piece {
  NamedTensor tensor;
  // A dense gradient's bytes, left in the gradient tensor.
  absl::Span<const char> dense_data;
  int64_t bytes = 0;
};

struct Part {
  std::vector<Piece> pieces;
  int64_t bytes = 0;
};

// Appends the pieces of the dense gradients of shard `shard`'s variables,
// cut as TensorChunkToProto cuts them, their bytes borrowed from the
// gradients; adds their bytes to *total.
absl::Status CutDenseGradients(const ShardSlicer& slicer, int shard,
                               const absl::flat_hash_map<std::string, Tensor>& dense_gradients,
                               int64_t chunk_bytes, std::vector<Piece>* pieces, int64_t* total) {
  for (const DenseVariableSlot& slot : slicer.dense()) {
    if (slot.shard != shard) continue;
    auto found = dense_gradients.find(slot.name);
    if (found == dense_gradients.end()) continue;  // not trainable
    const Tensor& gradient = found->second;
    if ((gradient.dtype() != DATA_TYPE_FLOAT32 && gradient.dtype() != DATA_TYPE_BFLOAT16) ||
        gradient.shape() != slot.shape) {
      return absl::InvalidArgumentError(absl::StrCat("the gradient of \"", slot.name, "\" is ",
                                                     gradient.DebugString(), "; the variable is ",
                                                     slot.shape.DebugString()));
    }
    const int64_t whole = static_cast<int64_t>(gradient.num_bytes());
    const int64_t element_bytes = gradient.dtype() == DATA_TYPE_BFLOAT16 ? 2 : kFloatBytes;
    const int64_t piece_bytes = DensePieceBytes(whole, element_bytes, chunk_bytes);
    const char* data = static_cast<const char*>(gradient.raw_data());
    int64_t offset = 0;
    do {
      Piece& piece = pieces->emplace_back();
      piece.tensor.set_name(slot.name);
      piece.bytes = std::min(piece_bytes, whole - offset);
      SetDensePieceHeader(gradient.dtype(), gradient.shape().dims(), offset, piece.bytes, whole,
                          piece.tensor.mutable_dense());
      piece.dense_data = absl::MakeConstSpan(data + offset, piece.bytes);
      offset += piece.bytes;
      *total += piece.bytes;
    } while (offset < whole);
  }
  for (const auto& [name, gradient] : dense_gradients) {
    if (slicer.FindDense(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("a gradient of \"", name, "\", which the job has no dense variable of"));
    }
  }
  return absl::OkStatus();
}

// Appends the pieces of the rows gradients that shard `shard` holds, their
// rows copied in; adds their bytes to *total.
absl::Status CutRowGradients(const ShardSlicer& slicer, int shard,
                             const absl::flat_hash_map<std::string, EmbeddingRows>& rows_gradients,
                             const RowPositions& positions, int64_t chunk_bytes,
                             std::vector<Piece>* pieces, int64_t* total) {
  for (const auto& [name, rows] : rows_gradients) {
    const EmbeddingTableSlot* table = slicer.FindTable(name);
    if (table == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("a rows gradient of \"", name, "\", which the job has no table of"));
    }
    const int64_t dim = table->dim;
    if (rows.values.dtype() != DATA_TYPE_FLOAT32 ||
        rows.values.shape() != Shape({static_cast<int64_t>(rows.ids.size()), dim})) {
      return absl::InvalidArgumentError(absl::StrCat("the rows gradient of \"", name, "\" is ",
                                                     rows.values.DebugString(), " for ",
                                                     rows.ids.size(), " ids of width ", dim));
    }
    const absl::Span<const int32_t> on_shard = PositionsOn(positions, name, shard);
    const size_t rows_per_piece = static_cast<size_t>(RowsPerPiece(dim, chunk_bytes));
    for (size_t begin = 0; begin < on_shard.size(); begin += rows_per_piece) {
      Piece& piece = pieces->emplace_back();
      piece.tensor.set_name(name);
      GatherRowsPiece(rows.ids, rows.values.data<float>(), dim,
                      on_shard.subspan(begin, rows_per_piece), piece.tensor.mutable_rows());
      piece.bytes = static_cast<int64_t>(piece.tensor.rows().values().size());
      *total += piece.bytes;
    }
  }
  return absl::OkStatus();
}

// The messages of part `part` of `num_parts`: `pieces` packed into
// messages of about chunk_bytes, each with the header's fields, the last
// with end_of_push.
std::vector<OutgoingRequest> PackPart(const PushRequest& header, int part, int num_parts,
                                      int64_t chunk_bytes, std::vector<Piece>& pieces) {
  std::vector<OutgoingRequest> out;
  int64_t in_message = 0;
  auto start_message = [&] {
    PushRequest* push = out.emplace_back().message.mutable_push();
    out.back().message.set_tag(1);
    // Every field of the header (job, id, versions, examples, generation,
    // membership deadline, origin), so that none is left behind when a
    // field is added; the gradients and framing are this message's own.
    *push = header;
    push->clear_gradients();
    push->clear_end_of_push();
    push->clear_num_parts();
    push->clear_part();
    if (num_parts > 1) {
      push->set_num_parts(num_parts);
      push->set_part(part);
    }
    in_message = 0;
  };
  for (Piece& piece : pieces) {
    if (out.empty() || (in_message > 0 && in_message + piece.bytes > chunk_bytes)) {
      start_message();
    }
    OutgoingRequest& message = out.back();
    PushRequest* push = message.message.mutable_push();
    *push->add_gradients() = std::move(piece.tensor);
    if (!piece.dense_data.empty()) {
      message.dense_data.resize(push->gradients_size());
      message.dense_data.back() = piece.dense_data;
    }
    in_message += piece.bytes;
  }
  if (out.empty()) start_message();
  out.back().message.mutable_push()->set_end_of_push(true);
  return out;
}

}  // namespace

RowPositions SliceRows(const ShardSlicer& slicer, const RowIds& rows) {
  RowPositions positions;
  for (const auto& [name, ids] : rows) {
    if (slicer.FindTable(name) != nullptr) positions[name] = slicer.SliceIds(ids);
  }
  return positions;
}

RowPositions SliceGradientRows(const ShardSlicer& slicer, const Gradients& gradients) {
  RowPositions positions;
  for (const auto& [name, rows] : gradients.rows) {
    if (slicer.FindTable(name) != nullptr) positions[name] = slicer.SliceIds(rows.ids);
  }
  return positions;
}

std::vector<PullLane> PlanShardPull(const ShardSlicer& slicer, int shard, const RowIds& rows,
                                    const RowPositions& positions, int max_lanes,
                                    int64_t parallel_min_bytes) {
  if (!slicer.involves(shard)) return {};
  int64_t total = 0;
  for (int index : slicer.dense_on(shard)) {
    total += slicer.dense()[index].shape.num_elements() * kFloatBytes;
  }
  for (const EmbeddingTableSlot& table : slicer.tables()) {
    total += static_cast<int64_t>(PositionsOn(positions, table.name, shard).size()) * table.dim *
             kFloatBytes;
  }
  std::vector<PullLane> lanes(LanesFor(total, max_lanes, parallel_min_bytes));
  const int64_t share = CeilDiv(std::max<int64_t>(total, 1), static_cast<int64_t>(lanes.size()));

  for (int index : slicer.dense_on(shard)) {
    const DenseVariableSlot& slot = slicer.dense()[index];
    const int64_t elements = slot.shape.num_elements();
    const int64_t bytes = elements * kFloatBytes;
    if (lanes.size() > 1 && bytes > share) {
      const int64_t per_lane = CeilDiv(elements, static_cast<int64_t>(lanes.size()));
      for (size_t i = 0; i < lanes.size(); ++i) {
        const int64_t begin = static_cast<int64_t>(i) * per_lane;
        const int64_t count = std::min(per_lane, elements - begin);
        if (count <= 0) break;
        DenseRange* range = lanes[i].request.add_ranges();
        range->set_name(slot.name);
        range->set_offset(begin);
        range->set_count(count);
        lanes[i].dense_bytes[slot.name] += count * kFloatBytes;
        lanes[i].bytes += count * kFloatBytes;
      }
      continue;
    }
    PullLane& lane = lanes[LeastLoaded(lanes)];
    lane.request.add_names(slot.name);
    lane.dense_bytes[slot.name] += bytes;
    lane.bytes += bytes;
  }

  for (const EmbeddingTableSlot& table : slicer.tables()) {
    const std::vector<int32_t>& on_shard = PositionsOn(positions, table.name, shard);
    auto ids = rows.find(table.name);
    if (on_shard.empty() || ids == rows.end()) continue;
    PullLane& lane = lanes[LeastLoaded(lanes)];
    RowSelection* selection = lane.request.add_rows();
    selection->set_name(table.name);
    selection->mutable_ids()->Reserve(static_cast<int>(on_shard.size()));
    for (int32_t p : on_shard) selection->add_ids(ids->second[p]);
    lane.row_positions[table.name] = &on_shard;
    lane.bytes += static_cast<int64_t>(on_shard.size()) * table.dim * kFloatBytes;
  }

  std::vector<PullLane> used;
  for (PullLane& lane : lanes) {
    const PullRequest& r = lane.request;
    if (r.names_size() + r.ranges_size() + r.rows_size() > 0) used.push_back(std::move(lane));
  }
  if (used.empty()) {
    // Nothing of this batch lives here; still learn (and wait for) the
    // shard's version, which the next push to it must name.
    PullLane& lane = used.emplace_back();
    const std::string& table = slicer.tables().front().name;
    lane.request.add_rows()->set_name(table);
    lane.row_positions[table] = &NoPositions();
  }
  return used;
}

absl::StatusOr<std::vector<std::vector<OutgoingRequest>>> BuildShardPush(
    const ShardSlicer& slicer, int shard, const Gradients& gradients, const RowPositions& positions,
    const PushRequest& header, int max_parts, int64_t parallel_min_bytes, int64_t chunk_bytes,
    int64_t* bytes, const absl::flat_hash_map<std::string, Tensor>* narrowed_dense) {
  const absl::flat_hash_map<std::string, Tensor>& dense_gradients =
      narrowed_dense != nullptr ? *narrowed_dense : gradients.dense;
  std::vector<Piece> pieces;
  int64_t total = 0;
  RETURN_IF_ERROR(CutDenseGradients(slicer, shard, dense_gradients, chunk_bytes, &pieces, &total));
  RETURN_IF_ERROR(
      CutRowGradients(slicer, shard, gradients.rows, positions, chunk_bytes, &pieces, &total));
  *bytes = total;

  std::vector<Part> parts(LanesFor(total, max_parts, parallel_min_bytes));
  for (Piece& piece : pieces) {
    Part& part = parts[LeastLoaded(parts)];
    part.bytes += piece.bytes;
    part.pieces.push_back(std::move(piece));
  }
  const int num_parts = static_cast<int>(parts.size());
  std::vector<std::vector<OutgoingRequest>> messages(parts.size());
  for (int p = 0; p < num_parts; ++p) {
    messages[p] = PackPart(header, p, num_parts, chunk_bytes, parts[p].pieces);
  }
  return messages;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
