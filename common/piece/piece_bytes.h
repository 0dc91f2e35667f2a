#ifndef PSTRAIN_COMMON_PIECE_PIECE_BYTES_H_
#define PSTRAIN_COMMON_PIECE_PIECE_BYTES_H_

// The bytes of one received piece of a tensor, as the receiver keeps them
// until it is done with them: its own copy, or bytes that lie elsewhere (a
// shared-memory lane's segment) together with what keeps them there. A
// consumer reads both the same way, so a piece taken from where it arrived
// need not be copied first.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace pstrain {

// Movable. What bytes() returns is valid while *this lives unmoved.
class PieceBytes {
 public:
  PieceBytes() = default;
  // Bytes of its own (taken over, not copied).
  explicit PieceBytes(std::string owned) : owned_(std::move(owned)) {}
  // `bytes`, which stay valid and unchanged while `keeper` lives.
  PieceBytes(absl::string_view bytes, std::shared_ptr<const void> keeper)
      : borrowed_(bytes), keeper_(std::move(keeper)) {}

  absl::string_view bytes() const { return keeper_ != nullptr ? borrowed_ : owned_; }
  int64_t size() const { return static_cast<int64_t>(bytes().size()); }

 private:
  std::string owned_;
  absl::string_view borrowed_;
  std::shared_ptr<const void> keeper_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PIECE_PIECE_BYTES_H_
