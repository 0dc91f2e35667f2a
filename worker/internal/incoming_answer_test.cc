#include "worker/internal/incoming_answer.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

// `bytes` as a ByteBuffer cut at `cuts` (as the transport may cut it).
grpc::ByteBuffer Cut(const std::string& bytes, std::vector<size_t> cuts) {
  std::vector<grpc::Slice> slices;
  size_t from = 0;
  cuts.push_back(bytes.size());
  for (size_t cut : cuts) {
    slices.emplace_back(bytes.data() + from, cut - from);
    from = cut;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

std::string Floats(size_t n, uint32_t seed) {
  std::string out(n * 4, '\0');
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>((i + seed) * 2654435761u);  // NaNs, denormals
    std::memcpy(&out[i * 4], &bits, 4);
  }
  return out;
}

PushPullResponse PullAnswer() {
  PushPullResponse r;
  r.set_tag(5);
  PullResponse* pull = r.mutable_pull();
  pull->set_version(41);
  NamedTensor* a = pull->add_values();
  a->set_name("a");
  a->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  a->mutable_dense()->mutable_shape()->add_dims(100000);
  a->mutable_dense()->set_data(Floats(20000, 1));
  a->mutable_dense()->mutable_chunk()->set_offset(80000);
  a->mutable_dense()->mutable_chunk()->set_total_bytes(400000);
  NamedTensor* rows = pull->add_values();
  rows->set_name("table");
  rows->mutable_rows()->set_dtype(DATA_TYPE_FLOAT32);
  rows->mutable_rows()->set_row_width(2);
  rows->mutable_rows()->add_ids(3);
  rows->mutable_rows()->set_values(Floats(2, 9));
  NamedTensor* b = pull->add_values();
  b->set_name("b");
  b->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  b->mutable_dense()->mutable_shape()->add_dims(3);
  b->mutable_dense()->set_data(Floats(3, 7));
  pull->set_end_of_pull(true);
  return r;
}

void ExpectSameAnswer(const IncomingAnswer& got, const PushPullResponse& sent) {
  PushPullResponse without_data = sent;
  for (NamedTensor& t : *without_data.mutable_pull()->mutable_values()) {
    if (t.has_dense()) t.mutable_dense()->clear_data();
  }
  EXPECT_EQ(got.message().SerializeAsString(), without_data.SerializeAsString());
  for (int i = 0; i < sent.pull().values_size(); ++i) {
    if (!sent.pull().values(i).has_dense()) continue;
    const std::string& data = sent.pull().values(i).dense().data();
    ASSERT_EQ(got.DenseDataSize(i), static_cast<int64_t>(data.size()));
    std::string copy(data.size(), '\0');
    got.CopyDenseData(i, copy.data());
    EXPECT_EQ(copy, data) << "value " << i;
  }
}

TEST(IncomingAnswerTest, PullAnswerParsesAsProtobufWithDataCopiedBitForBit) {
  const PushPullResponse sent = PullAnswer();
  const std::string bytes = sent.SerializeAsString();
  absl::StatusOr<IncomingAnswer> whole = IncomingAnswer::Parse(Cut(bytes, {}));
  ASSERT_TRUE(whole.ok()) << whole.status();
  ExpectSameAnswer(*whole, sent);

  // Cut anywhere, in keys, lengths and data alike.
  std::mt19937 random(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<size_t> cuts;
    size_t at = 0;
    while (true) {
      at += 1 + random() % (trial % 2 == 0 ? 7 : 20000);
      if (at >= bytes.size()) break;
      cuts.push_back(at);
    }
    absl::StatusOr<IncomingAnswer> cut = IncomingAnswer::Parse(Cut(bytes, cuts));
    ASSERT_TRUE(cut.ok()) << cut.status();
    ExpectSameAnswer(*cut, sent);
  }
}

TEST(IncomingAnswerTest, OtherAnswersParseAsProtobuf) {
  PushPullResponse push;
  push.set_tag(2);
  push.mutable_push()->set_outcome(PUSH_OUTCOME_APPLIED);
  push.mutable_push()->set_version(8);
  absl::StatusOr<IncomingAnswer> got = IncomingAnswer::Parse(Cut(push.SerializeAsString(), {3}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->message().SerializeAsString(), push.SerializeAsString());

  PushPullResponse error;
  error.set_tag(4);
  error.mutable_error()->set_message("no such job");
  got = IncomingAnswer::Parse(Cut(error.SerializeAsString(), {}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->message().SerializeAsString(), error.SerializeAsString());
}

TEST(IncomingAnswerTest, DamagedBytesAreRefused) {
  const std::string bytes = PullAnswer().SerializeAsString();
  for (size_t cut : {size_t{1}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(IncomingAnswer::Parse(Cut(bytes.substr(0, cut), {})).status()))
        << "truncated at " << cut;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(IncomingAnswer::Parse(Cut("\xff\xff\xff", {})).status()));
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
