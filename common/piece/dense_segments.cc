#include "common/piece/dense_segments.h"

#include <iterator>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;

}  // namespace

absl::Status DenseSegments::Add(absl::string_view name, int64_t offset, PieceBytes values) {
  const int64_t size = values.size();
  auto next = ranges_.upper_bound(offset);
  const bool overlaps_next = next != ranges_.end() && next->first < offset + size;
  const bool overlaps_prev = next != ranges_.begin() && std::prev(next)->second > offset;
  if (overlaps_next || overlaps_prev) {
    return absl::InvalidArgumentError(absl::StrCat("a chunk of \"", name, "\" at offset ", offset,
                                                   " overlaps bytes already sent"));
  }
  ranges_.emplace(offset, offset + size);
  received_ += size;
  pieces_.emplace_back(offset, std::move(values));
  return absl::OkStatus();
}

absl::Status DenseSegments::CheckComplete(absl::string_view name) const {
  if (received_ == total_bytes_) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("the chunks of \"", name,
                                                 "\" do not add up: ", received_, " of ",
                                                 total_bytes_, " bytes arrived"));
}

std::vector<DenseSegment> DenseSegments::View() const {
  std::vector<DenseSegment> segments;
  segments.reserve(pieces_.size());
  for (const auto& [offset, piece] : pieces_) {
    const absl::string_view bytes = piece.bytes();
    segments.push_back(DenseSegment{
        offset / kFloatBytes, absl::MakeConstSpan(reinterpret_cast<const float*>(bytes.data()),
                                                  bytes.size() / kFloatBytes)});
  }
  return segments;
}

}  // namespace pstrain
