#include "common/net/wire_bytes.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace {

NamedTensor Chunk(const std::string& name) {
  NamedTensor t;
  t.set_name(name);
  DenseTensor* d = t.mutable_dense();
  d->set_dtype(DATA_TYPE_FLOAT32);
  d->mutable_shape()->add_dims(3000);
  d->mutable_chunk()->set_offset(4000);
  d->mutable_chunk()->set_total_bytes(12000);
  return t;
}

TEST(DenseTensorBytesTest, IsTheSerialisationOfTheTensorWithItsData) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * -1.25f;
  const std::string data(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  const NamedTensor header = Chunk("layer/kernel");
  NamedTensor whole = header;
  whole.mutable_dense()->set_data(data);

  const std::string wire =
      ByteBufferContents(DenseTensorBytes(header, grpc::Slice(data)).ToByteBuffer());
  EXPECT_EQ(wire, whole.SerializeAsString());
  NamedTensor parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.dense().data(), data);
  EXPECT_EQ(parsed.dense().chunk().offset(), 4000);
}

TEST(DenseTensorBytesTest, EmptyDataIsLeftOutAsProtobufDoes) {
  const NamedTensor header = Chunk("b");
  EXPECT_EQ(ByteBufferContents(DenseTensorBytes(header, grpc::Slice()).ToByteBuffer()),
            header.SerializeAsString());
}

// A PullResponse of several tensors, the data of two of them in slices, the
// fields around them serialised: the same bytes as protobuf's.
TEST(WireBytesTest, NestedFieldsMatchProtobufAndSlicesAreReferenced) {
  std::vector<float> a(5000, 0.5f), b(7, -3.0f);
  a[17] = -0.0f;
  grpc::Slice a_slice(a.data(), a.size() * 4, grpc::Slice::STATIC_SLICE);
  grpc::Slice b_slice(b.data(), b.size() * 4, grpc::Slice::STATIC_SLICE);

  NamedTensor small = Chunk("inline");
  small.mutable_dense()->set_data("abcd");
  WireBytes values;
  WireBytes first = DenseTensorBytes(Chunk("a"), a_slice);
  WireBytes second;
  second.AppendMessage(small);
  WireBytes third = DenseTensorBytes(Chunk("b"), b_slice);
  WireBytes body;
  PullResponse version_only;
  version_only.set_version(12);
  body.AppendMessage(version_only);
  body.AppendMessageField(2, std::move(first));
  body.AppendMessageField(2, std::move(second));
  body.AppendMessageField(2, std::move(third));
  PullResponse end_only;
  end_only.set_end_of_pull(true);
  body.AppendMessage(end_only);
  const grpc::ByteBuffer buffer = std::move(body).ToByteBuffer();

  PullResponse expected;
  expected.set_version(12);
  *expected.add_values() = Chunk("a");
  expected.mutable_values(0)->mutable_dense()->set_data(a.data(), a.size() * 4);
  *expected.add_values() = small;
  *expected.add_values() = Chunk("b");
  expected.mutable_values(2)->mutable_dense()->set_data(b.data(), b.size() * 4);
  expected.set_end_of_pull(true);
  EXPECT_EQ(ByteBufferContents(buffer), expected.SerializeAsString());

  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buffer.Dump(&slices).ok());
  int referenced = 0;
  for (const grpc::Slice& s : slices) {
    if (s.begin() == reinterpret_cast<const uint8_t*>(a.data()) ||
        s.begin() == reinterpret_cast<const uint8_t*>(b.data())) {
      ++referenced;
    }
  }
  EXPECT_EQ(referenced, 2);
}

}  // namespace
}  // namespace pstrain
