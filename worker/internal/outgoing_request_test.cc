#include "worker/internal/outgoing_request.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/net/wire_bytes.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

bool HasSliceAt(const grpc::ByteBuffer& buffer, const void* at, size_t size) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  for (const grpc::Slice& s : slices) {
    if (static_cast<const void*>(s.begin()) == at && s.size() == size) return true;
  }
  return false;
}

// Floats whose bit patterns a lossy path would change: NaNs with payloads,
// signed zero, denormals, infinities.
std::vector<float> AwkwardFloats(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(i * 2654435761u);
    std::memcpy(&v[i], &bits, 4);
  }
  v[0] = -0.0f;
  v[1] = std::numeric_limits<float>::denorm_min();
  v[2] = -std::numeric_limits<float>::infinity();
  return v;
}

OutgoingRequest PushWithEveryKindOfGradient(const std::vector<float>& a,
                                            const std::vector<float>& b) {
  OutgoingRequest r;
  r.message.set_tag(7);
  PushRequest* push = r.message.mutable_push();
  push->set_job_id("job");
  push->mutable_id()->set_worker(3);
  push->mutable_id()->set_incarnation(11);
  push->mutable_id()->set_sequence(42);
  push->set_base_version(9);
  push->set_end_of_push(true);
  push->set_examples(128);
  push->set_num_parts(2);
  push->set_part(1);
  push->set_generation(5);
  push->set_valid_until_unix_ms(123456789);
  // 0: a chunk of a larger tensor, borrowed.
  NamedTensor* g0 = push->add_gradients();
  g0->set_name("w0");
  g0->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  g0->mutable_dense()->mutable_shape()->add_dims(static_cast<int64_t>(a.size()) * 2);
  g0->mutable_dense()->mutable_chunk()->set_offset(static_cast<int64_t>(a.size()) * 4);
  g0->mutable_dense()->mutable_chunk()->set_total_bytes(static_cast<int64_t>(a.size()) * 8);
  // 1: a whole tensor with its own bytes.
  NamedTensor* g1 = push->add_gradients();
  g1->set_name("bias");
  g1->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  g1->mutable_dense()->mutable_shape()->add_dims(2);
  const float own[2] = {1.5f, -2.5f};
  g1->mutable_dense()->set_data(own, sizeof(own));
  // 2: rows.
  NamedTensor* g2 = push->add_gradients();
  g2->set_name("table");
  g2->mutable_rows()->set_dtype(DATA_TYPE_FLOAT32);
  g2->mutable_rows()->set_row_width(2);
  g2->mutable_rows()->add_ids(17);
  g2->mutable_rows()->set_values(own, sizeof(own));
  // 3: a whole tensor, borrowed, unchunked.
  NamedTensor* g3 = push->add_gradients();
  g3->set_name("w1");
  g3->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  g3->mutable_dense()->mutable_shape()->add_dims(static_cast<int64_t>(b.size()));
  r.dense_data = {absl::MakeConstSpan(reinterpret_cast<const char*>(a.data()), a.size() * 4),
                  {},
                  {},
                  absl::MakeConstSpan(reinterpret_cast<const char*>(b.data()), b.size() * 4)};
  return r;
}

TEST(SerializeRequestTest, APushIsByteForByteTheProtobufSerialisation) {
  const std::vector<float> a = AwkwardFloats(100000), b = AwkwardFloats(333);
  const OutgoingRequest r = PushWithEveryKindOfGradient(a, b);
  const std::string wire = ByteBufferContents(SerializeRequest(r));
  const PushPullRequest whole = r.Materialize();
  EXPECT_EQ(wire, whole.SerializeAsString());

  PushPullRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  ASSERT_EQ(parsed.push().gradients_size(), 4);
  const std::string& a_bytes = parsed.push().gradients(0).dense().data();
  ASSERT_EQ(a_bytes.size(), a.size() * 4);
  EXPECT_EQ(std::memcmp(a_bytes.data(), a.data(), a_bytes.size()), 0);
  const std::string& b_bytes = parsed.push().gradients(3).dense().data();
  ASSERT_EQ(b_bytes.size(), b.size() * 4);
  EXPECT_EQ(std::memcmp(b_bytes.data(), b.data(), b_bytes.size()), 0);
  EXPECT_EQ(parsed.push().gradients(0).dense().chunk().offset(), 400000);
  EXPECT_EQ(parsed.push().valid_until_unix_ms(), 123456789);
  EXPECT_EQ(parsed.push().gradients(2).rows().ids(0), 17);
  EXPECT_EQ(parsed.push().gradients(1).dense().data().size(), 8u);
}

TEST(SerializeRequestTest, ALaneRegionOfABorrowingPushIsSerialisedToo) {
  const std::vector<float> a = AwkwardFloats(1000), b = AwkwardFloats(33);
  OutgoingRequest r = PushWithEveryKindOfGradient(a, b);
  r.message.mutable_lane()->set_lane("lane-1");
  r.message.mutable_lane()->set_offset(4096);
  r.message.mutable_lane()->set_size(8192);
  const std::string wire = ByteBufferContents(SerializeRequest(r));
  EXPECT_EQ(wire, r.Materialize().SerializeAsString());
  PushPullRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.lane().lane(), "lane-1");
  EXPECT_EQ(parsed.lane().size(), 8192);
}

// gRPC may hold a request's slices after its call ends, while the worker
// computes its next gradients into the same tensors: what was serialised
// must not change with them.
TEST(SerializeRequestTest, TheSerialisedBytesDoNotFollowLaterChangesOfTheTensors) {
  std::vector<float> a = AwkwardFloats(4096), b = AwkwardFloats(10);
  const OutgoingRequest r = PushWithEveryKindOfGradient(a, b);
  const std::string expected = r.Materialize().SerializeAsString();
  grpc::ByteBuffer buffer = SerializeRequest(r);
  EXPECT_FALSE(HasSliceAt(buffer, a.data(), a.size() * 4));
  EXPECT_FALSE(HasSliceAt(buffer, b.data(), b.size() * 4));
  std::fill(a.begin(), a.end(), 7.0f);
  std::fill(b.begin(), b.end(), -7.0f);
  EXPECT_EQ(ByteBufferContents(buffer), expected);
}

TEST(SerializeRequestTest, RequestsWithoutTensorBytesSerialiseAsProtobufDoes) {
  OutgoingRequest pull;
  pull.message.set_tag(3);
  pull.message.mutable_pull()->set_job_id("job");
  pull.message.mutable_pull()->add_names("w");
  EXPECT_EQ(ByteBufferContents(SerializeRequest(pull)), pull.message.SerializeAsString());

  OutgoingRequest empty_push;
  empty_push.message.set_tag(1);
  empty_push.message.mutable_push()->set_job_id("job");
  empty_push.message.mutable_push()->set_end_of_push(true);
  empty_push.dense_data = {absl::Span<const char>()};
  EXPECT_EQ(ByteBufferContents(SerializeRequest(empty_push)),
            empty_push.message.SerializeAsString());
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
