#include "common/data/byte_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "glog/logging.h"

namespace pstrain {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

ByteBuffer::ByteBuffer(size_t size) {
  if (size == 0) return;
  // Large buffers map an extra huge page so that their start can sit on a
  // huge-page boundary, where the kernel can back them with huge pages.
  const bool huge = size >= kHugePage;
  mapping_size_ = huge ? size + kHugePage : size;
  mapping_ =
      mmap(nullptr, mapping_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  PCHECK(mapping_ != MAP_FAILED) << "cannot map " << mapping_size_ << " bytes for a data buffer";
  auto address = reinterpret_cast<uintptr_t>(mapping_);
  if (huge) {
    address = (address + kHugePage - 1) & ~(kHugePage - 1);
    // Only advice: without transparent huge pages the buffer works as is.
    madvise(reinterpret_cast<void*>(address), size, MADV_HUGEPAGE);
  }
  start_ = reinterpret_cast<uint8_t*>(address);
  size_ = size;
}

ByteBuffer::~ByteBuffer() { Release(); }

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)),
      start_(std::exchange(other.start_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    start_ = std::exchange(other.start_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ByteBuffer::ByteBuffer(const ByteBuffer& other) : ByteBuffer(CopyOf(other.view())) {}

ByteBuffer& ByteBuffer::operator=(const ByteBuffer& other) {
  if (this != &other) *this = CopyOf(other.view());
  return *this;
}

ByteBuffer ByteBuffer::CopyOf(absl::string_view bytes) {
  ByteBuffer buffer(bytes.size());
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

void ByteBuffer::Truncate(size_t size) { size_ = std::min(size, size_); }

void ByteBuffer::RemovePrefix(size_t count) {
  count = std::min(count, size_);
  start_ += count;
  size_ -= count;
}

void ByteBuffer::Release() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
  mapping_size_ = 0;
  start_ = nullptr;
  size_ = 0;
}

}  // namespace pstrain
