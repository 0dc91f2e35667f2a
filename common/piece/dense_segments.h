#ifndef PSTRAIN_COMMON_PIECE_DENSE_SEGMENTS_H_
#define PSTRAIN_COMMON_PIECE_DENSE_SEGMENTS_H_

// A dense tensor that arrives as pieces (dense_piece.h) in any order, over
// any number of messages and streams, kept as the segments it arrived in:
// each piece's bytes are taken over (or borrowed where they arrived, see
// piece_bytes.h), not copied together, and a consumer reads them where
// they lie.

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/piece/piece_bytes.h"

namespace pstrain {

// Elements [offset, offset + values.size()) of a dense tensor that arrived
// in pieces.
struct DenseSegment {
  int64_t offset = 0;
  absl::Span<const float> values;
};

// The float32 segments of one tensor received so far. Thread-compatible.
class DenseSegments {
 public:
  explicit DenseSegments(int64_t total_bytes) : total_bytes_(total_bytes) {}

  // Takes `values`, the float32 bytes at byte `offset` of the tensor (as
  // PlaceDensePiece placed them). InvalidArgument, naming `name`: they
  // overlap bytes received before. Nothing is kept then.
  absl::Status Add(absl::string_view name, int64_t offset, PieceBytes values);

  // OK once every byte has arrived exactly once; InvalidArgument, naming
  // `name`, saying how many arrived.
  absl::Status CheckComplete(absl::string_view name) const;

  // The segments, in the order they arrived; valid while *this is
  // unchanged.
  std::vector<DenseSegment> View() const;

  int64_t total_bytes() const { return total_bytes_; }

 private:
  int64_t total_bytes_ = 0;
  // Byte ranges received: offset -> end.
  std::map<int64_t, int64_t> ranges_;
  int64_t received_ = 0;
  std::vector<std::pair<int64_t, PieceBytes>> pieces_;  // byte offset, bytes
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PIECE_DENSE_SEGMENTS_H_
