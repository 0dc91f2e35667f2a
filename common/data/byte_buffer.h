#ifndef PSTRAIN_COMMON_DATA_BYTE_BUFFER_H_
#define PSTRAIN_COMMON_DATA_BYTE_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace pstrain {

// Owned bytes that a data set is loaded into: a file read whole, images'
// pixels. Copies are deep, like a std::vector's.
//
// The memory is its own anonymous mapping, and one of 2 MiB or more is
// advised for transparent huge pages: on a virtualised host every 4 KiB
// page's first touch is a fault costing microseconds, and touching the
// 47 MB of Fashion-MNIST's training images took about 150 ms of a
// process's start-up in faults alone, about as long as decompressing it.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  // `size` bytes, not initialised. Aborts when the memory cannot be mapped
  // (as operator new would throw).
  explicit ByteBuffer(size_t size);
  ~ByteBuffer();

  ByteBuffer(ByteBuffer&& other) noexcept;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept;
  ByteBuffer(const ByteBuffer& other);
  ByteBuffer& operator=(const ByteBuffer& other);

  // A buffer holding a copy of `bytes`.
  static ByteBuffer CopyOf(absl::string_view bytes);

  uint8_t* data() { return start_; }
  const uint8_t* data() const { return start_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  absl::string_view view() const {
    return absl::string_view(reinterpret_cast<const char*>(start_), size_);
  }

  // Keeps only the first `size` bytes (at most size()); the memory stays
  // mapped until the buffer goes.
  void Truncate(size_t size);
  // Drops the first `count` bytes (at most size()): a header already read.
  void RemovePrefix(size_t count);

 private:
  void Release();

  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  uint8_t* start_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_BYTE_BUFFER_H_
