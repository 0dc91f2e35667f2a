#include "common/data/byte_buffer.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ByteBufferTest, HoldsACopyAndDropsHeadAndTail) {
  ByteBuffer buffer = ByteBuffer::CopyOf("header:payload:tail");
  EXPECT_EQ(buffer.view(), "header:payload:tail");
  buffer.RemovePrefix(7);
  buffer.Truncate(7);
  EXPECT_EQ(buffer.view(), "payload");
  buffer.Truncate(100);  // never grows
  EXPECT_EQ(buffer.size(), 7u);
  buffer.RemovePrefix(100);
  EXPECT_TRUE(buffer.empty());
}

TEST(ByteBufferTest, CopiesAreDeep) {
  ByteBuffer original = ByteBuffer::CopyOf("abc");
  ByteBuffer copy = original;
  copy.data()[0] = 'x';
  EXPECT_EQ(original.view(), "abc");
  EXPECT_EQ(copy.view(), "xbc");
  original = copy;
  EXPECT_EQ(original.view(), "xbc");
}

TEST(ByteBufferTest, MovesOwnership) {
  ByteBuffer first = ByteBuffer::CopyOf("bytes");
  ByteBuffer second = std::move(first);
  EXPECT_TRUE(first.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(second.view(), "bytes");
  first = std::move(second);
  EXPECT_EQ(first.view(), "bytes");
  ByteBuffer empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.view(), "");
}

TEST(ByteBufferTest, LargeBuffersStartOnAHugePageBoundaryAndAreWritable) {
  constexpr size_t kSize = (size_t{5} << 20) + 3;
  ByteBuffer buffer(kSize);
  ASSERT_EQ(buffer.size(), kSize);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % (size_t{2} << 20), 0u);
  for (size_t i = 0; i < kSize; i += 4096) buffer.data()[i] = static_cast<uint8_t>(i >> 12);
  buffer.data()[kSize - 1] = 0xab;
  EXPECT_EQ(buffer.data()[4096 * 300], static_cast<uint8_t>(300));
  EXPECT_EQ(buffer.data()[kSize - 1], 0xab);
}

}  // namespace
}  // namespace pstrain
