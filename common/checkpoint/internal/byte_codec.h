#ifndef PSTRAIN_COMMON_CHECKPOINT_INTERNAL_BYTE_CODEC_H_
#define PSTRAIN_COMMON_CHECKPOINT_INTERNAL_BYTE_CODEC_H_

// Little-endian fixed-width encoding of the records of shard files
// (common/checkpoint/shard_file.h), including the payloads their writers
// build, such as a parameter server's exactly-once state.

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {
namespace internal {

// Appends fixed-width little-endian values to a string. Not thread-safe.
class ByteWriter {
 public:
  void PutU32(uint32_t v) { PutRaw(&v, 4); }
  void PutU64(uint64_t v) { PutRaw(&v, 8); }
  void PutI64(int64_t v) { PutRaw(&v, 8); }
  // Length (u64) then bytes.
  void PutString(absl::string_view s) {
    PutU64(s.size());
    out_.append(s.data(), s.size());
  }
  void PutRaw(const void* p, size_t n) {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian hosts only");
    out_.append(static_cast<const char*>(p), n);
  }
  std::string& buffer() { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what ByteWriter wrote; every getter returns false, consuming
// nothing, when too few bytes remain. Not thread-safe.
class ByteReader {
 public:
  explicit ByteReader(absl::string_view in) : in_(in) {}
  bool GetU32(uint32_t* v) { return GetRaw(v, 4); }
  bool GetU64(uint64_t* v) { return GetRaw(v, 8); }
  bool GetI64(int64_t* v) { return GetRaw(v, 8); }
  bool GetString(std::string* s) {
    uint64_t n;
    if (in_.size() < 8) return false;
    std::memcpy(&n, in_.data(), 8);
    if (n > in_.size() - 8) return false;
    s->assign(in_.data() + 8, n);
    in_.remove_prefix(8 + n);
    return true;
  }
  // A view of the next n bytes.
  bool GetView(size_t n, absl::string_view* v) {
    if (n > in_.size()) return false;
    *v = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool GetRaw(void* p, size_t n) {
    if (n > in_.size()) return false;
    std::memcpy(p, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  size_t remaining() const { return in_.size(); }

 private:
  absl::string_view in_;
};

}  // namespace internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_INTERNAL_BYTE_CODEC_H_
