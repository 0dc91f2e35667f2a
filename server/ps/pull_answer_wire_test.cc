#include "server/ps/pull_answer_wire.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/net/wire_bytes.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

NamedTensor DenseChunk(const std::string& name, int64_t offset) {
  NamedTensor t;
  t.set_name(name);
  t.mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  t.mutable_dense()->mutable_shape()->add_dims(1 << 20);
  t.mutable_dense()->mutable_chunk()->set_offset(offset);
  t.mutable_dense()->mutable_chunk()->set_total_bytes(4 << 20);
  return t;
}

grpc::Slice FilledSlice(const std::vector<float>& values) {
  grpc::Slice slice = NewValueSlice(static_cast<int64_t>(values.size() * 4));
  std::memcpy(const_cast<uint8_t*>(slice.begin()), values.data(), values.size() * 4);
  return slice;
}

TEST(PullAnswerBytesTest, IsTheSerialisationOfTheAnswerWithItsValuesBitForBit) {
  std::vector<float> a(30000), b(5000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 1e-3f - 7.0f;
  for (size_t i = 0; i < b.size(); ++i) {
    const uint32_t bits = static_cast<uint32_t>(i * 2654435761u);  // NaNs, denormals, ...
    std::memcpy(&b[i], &bits, 4);
  }
  PullResponse pull;
  pull.set_version(77);
  *pull.add_values() = DenseChunk("a", 4096);
  NamedTensor* inline_value = pull.add_values();
  *inline_value = DenseChunk("small", 0);
  inline_value->mutable_dense()->set_data(std::string(12, 'x'));
  NamedTensor* rows = pull.add_values();
  rows->set_name("table");
  rows->mutable_rows()->set_dtype(DATA_TYPE_FLOAT32);
  rows->mutable_rows()->set_row_width(1);
  rows->mutable_rows()->add_ids(5);
  rows->mutable_rows()->set_values(std::string(4, 'r'));
  *pull.add_values() = DenseChunk("b", 0);
  pull.set_end_of_pull(true);

  PulledSlices slices;
  slices.emplace_back(0, FilledSlice(a));
  slices.emplace_back(3, FilledSlice(b));
  const uint8_t* a_at = slices[0].second.begin();
  const grpc::ByteBuffer bytes = PullAnswerBytes(9, pull, std::move(slices));

  PushPullResponse expected;
  expected.set_tag(9);
  *expected.mutable_pull() = pull;
  expected.mutable_pull()->mutable_values(0)->mutable_dense()->set_data(a.data(), a.size() * 4);
  expected.mutable_pull()->mutable_values(3)->mutable_dense()->set_data(b.data(), b.size() * 4);
  const std::string wire = ByteBufferContents(bytes);
  EXPECT_EQ(wire, expected.SerializeAsString());

  PushPullResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  const std::string& b_bytes = parsed.pull().values(3).dense().data();
  ASSERT_EQ(b_bytes.size(), b.size() * 4);
  EXPECT_EQ(std::memcmp(b_bytes.data(), b.data(), b_bytes.size()), 0);

  // The values travel in the slice they were read into, not a copy.
  std::vector<grpc::Slice> pieces;
  ASSERT_TRUE(bytes.Dump(&pieces).ok());
  bool referenced = false;
  for (const grpc::Slice& piece : pieces) referenced |= piece.begin() == a_at;
  EXPECT_TRUE(referenced);
}

TEST(PullAnswerBytesTest, AnswerWithoutSlicesIsPlainProtobuf) {
  PullResponse pull;
  pull.set_version(3);
  *pull.add_values() = DenseChunk("w", 0);
  pull.mutable_values(0)->mutable_dense()->set_data("abcdefgh");
  PushPullResponse expected;
  expected.set_tag(1);
  *expected.mutable_pull() = pull;
  EXPECT_EQ(ByteBufferContents(PullAnswerBytes(1, pull, {})), expected.SerializeAsString());
}

}  // namespace
}  // namespace pstrain
