#include "tests/fuzz/checksum_fixup.h"

#include <cstdint>
#include <cstring>

#include "common/checksum/crc32c.h"

namespace pstrain {
namespace fuzz {
namespace {

// As common/checkpoint/manifest.cc and shard_file.cc lay them out.
constexpr char kManifestChecksumTag = 0x4d;  // field 9, fixed32
constexpr size_t kManifestChecksumBytes = 5;
constexpr size_t kShardFileHeaderBytes = 12;  // magic and format version
constexpr size_t kRecordPrefix = 12;          // u32 type, u64 length
constexpr size_t kRecordSuffix = 4;           // u32 masked CRC32C

void PutFixed32(uint32_t value, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

}  // namespace

std::string WithManifestChecksum(absl::string_view bytes) {
  absl::string_view body = bytes;
  if (body.size() >= kManifestChecksumBytes &&
      body[body.size() - kManifestChecksumBytes] == kManifestChecksumTag) {
    body.remove_suffix(kManifestChecksumBytes);
  }
  std::string out(body);
  out.push_back(kManifestChecksumTag);
  char crc[4];
  PutFixed32(Crc32cMask(Crc32c(body)), crc);
  out.append(crc, 4);
  return out;
}

std::string WithRecordChecksums(absl::string_view bytes) {
  std::string out(bytes);
  size_t at = kShardFileHeaderBytes;
  while (at < out.size() && out.size() - at >= kRecordPrefix + kRecordSuffix) {
    uint64_t length = 0;
    std::memcpy(&length, out.data() + at + 4, 8);
    if (length > out.size() - at - kRecordPrefix - kRecordSuffix) break;
    const size_t end = at + kRecordPrefix + static_cast<size_t>(length);
    const uint32_t crc = Crc32c(absl::string_view(out.data() + at, end - at));
    PutFixed32(Crc32cMask(crc), &out[end]);
    at = end + kRecordSuffix;
  }
  return out;
}

}  // namespace fuzz
}  // namespace pstrain
