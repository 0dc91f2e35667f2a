#ifndef PSTRAIN_COMMON_CHECKSUM_CRC32C_H_
#define PSTRAIN_COMMON_CHECKSUM_CRC32C_H_

// CRC32C (Castagnoli, the polynomial of iSCSI, ext4 and leveldb), used for
// checkpoint files and their MANIFEST. Uses the SSE4.2 crc32 instruction when
// the CPU has it and a table-driven loop otherwise; both give the same value.
// Every function here is thread-safe.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace pstrain {

// Returns the CRC32C of data[0, n) appended to a byte string whose CRC32C is
// `crc`, so a file can be checksummed as it is written:
//   uint32_t crc = 0;  // the CRC32C of nothing
//   for (piece : pieces) crc = Crc32cExtend(crc, piece.data(), piece.size());
// gives Crc32c(concatenation of the pieces).
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);

// Returns the CRC32C of `data`.
inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data.data(), data.size()); }

// A CRC stored inside the data it is later computed over (a record that
// holds the CRC of an earlier record, a checkpoint that embeds a file's CRC)
// makes the CRC of the whole weak: CRCs of strings that contain their own
// CRCs are correlated. Store Crc32cMask(crc) instead and Crc32cUnmask it on
// reading, as leveldb does. The constant is leveldb's, so values written by
// either agree.
inline constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;

inline uint32_t Crc32cMask(uint32_t crc) {
  // Rotate right by 15 bits and add a constant.
  return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta;
}

// The inverse of Crc32cMask.
inline uint32_t Crc32cUnmask(uint32_t masked_crc) {
  const uint32_t rot = masked_crc - kCrc32cMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKSUM_CRC32C_H_
