#include "common/tensor/tensor_proto.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr DataType kAllTypes[] = {DATA_TYPE_FLOAT32, DATA_TYPE_FLOAT64, DATA_TYPE_INT32,
                                  DATA_TYPE_INT64, DATA_TYPE_UINT8};

// A tensor whose every byte is random, so float tensors include NaNs with
// payloads, infinities, denormals and negative zeros: any conversion that
// went through a value rather than the bytes would change them.
Tensor RandomTensor(DataType dtype, Shape shape, uint64_t seed) {
  Tensor t = *Tensor::CreateUninitialized(dtype, std::move(shape));
  std::mt19937_64 rng(seed);
  auto* p = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.num_bytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  return t;
}

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.num_bytes(), b.num_bytes());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.num_bytes()), 0);
}

DenseTensor Proto(DataType dtype, std::initializer_list<int64_t> dims, size_t data_bytes) {
  DenseTensor proto;
  proto.set_dtype(dtype);
  for (int64_t d : dims) proto.mutable_shape()->add_dims(d);
  proto.mutable_data()->assign(data_bytes, '\x01');
  return proto;
}

// Assembles `pieces` in order, expecting success.
Tensor Assemble(const std::vector<DenseTensor>& pieces) {
  TensorAssembler assembler;
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_FALSE(assembler.complete()) << "before piece " << i;
    absl::Status status = assembler.Add(pieces[i]);
    EXPECT_TRUE(status.ok()) << "piece " << i << ": " << status;
  }
  EXPECT_TRUE(assembler.complete());
  absl::StatusOr<Tensor> t = assembler.Finish();
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Tensor();
}

TEST(TensorProtoTest, RoundTripIsBitExactForEveryType) {
  for (DataType dtype : kAllTypes) {
    const Tensor original = RandomTensor(dtype, Shape({7, 3}), dtype);
    DenseTensor proto;
    TensorToProto(original, &proto);
    EXPECT_EQ(proto.dtype(), dtype);
    EXPECT_EQ(proto.shape().dims_size(), 2);
    EXPECT_FALSE(proto.has_chunk());
    EXPECT_EQ(proto.data().size(), original.num_bytes());
    absl::StatusOr<Tensor> back = TensorFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameTensor(*back, original);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(back->raw_data()) % 64, 0u);
  }
}

TEST(TensorProtoTest, SpecialFloatValuesSurvive) {
  const float values[] = {-0.0f, std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::denorm_min()};
  const Tensor original = *Tensor::FromValues<float>(Shape({4}), values);
  DenseTensor proto;
  TensorToProto(original, &proto);
  ExpectSameTensor(*TensorFromProto(proto), original);
}

TEST(TensorProtoTest, ScalarAndEmptyTensorsRoundTrip) {
  for (const Shape& shape : {Shape(), Shape({0}), Shape({4, 0, 2})}) {
    const Tensor original = RandomTensor(DATA_TYPE_INT64, shape, 1);
    DenseTensor proto;
    TensorToProto(original, &proto);
    absl::StatusOr<Tensor> back = TensorFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameTensor(*back, original);
  }
}

TEST(TensorProtoTest, ToProtoReplacesPreviousContents) {
  DenseTensor proto;
  TensorToProto(RandomTensor(DATA_TYPE_FLOAT64, Shape({100}), 1), &proto);
  proto.mutable_chunk()->set_total_bytes(5);
  const Tensor small = RandomTensor(DATA_TYPE_UINT8, Shape({2, 2}), 2);
  TensorToProto(small, &proto);
  EXPECT_FALSE(proto.has_chunk());
  ExpectSameTensor(*TensorFromProto(proto), small);
}

TEST(TensorProtoTest, FromProtoRefusesWrongDataSize) {
  absl::StatusOr<Tensor> t = TensorFromProto(Proto(DATA_TYPE_FLOAT32, {2, 2}, 12));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              HasSubstr("tensor data has 12 bytes, shape [2, 2] float32 needs 16"));

  t = TensorFromProto(Proto(DATA_TYPE_FLOAT32, {2, 2}, 20));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("tensor data has 20 bytes, shape [2, 2] float32 needs 16"));
}

TEST(TensorProtoTest, FromProtoRefusesUnspecifiedDtype) {
  absl::StatusOr<Tensor> t = TensorFromProto(Proto(DATA_TYPE_UNSPECIFIED, {2}, 8));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("tensor dtype is unspecified"));
}

TEST(TensorProtoTest, FromProtoRefusesUnknownDtype) {
  absl::StatusOr<Tensor> t = TensorFromProto(Proto(static_cast<DataType>(17), {2}, 8));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("unknown dtype 17"));
}

TEST(TensorProtoTest, FromProtoRefusesNegativeDim) {
  absl::StatusOr<Tensor> t = TensorFromProto(Proto(DATA_TYPE_FLOAT32, {3, -4}, 0));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("[3, -4] has negative dim -4 at index 1"));
}

TEST(TensorProtoTest, FromProtoRefusesOverflowingShape) {
  const int64_t big = int64_t{1} << 40;
  absl::StatusOr<Tensor> t = TensorFromProto(Proto(DATA_TYPE_FLOAT32, {big, big}, 0));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("more than 2^63-1 elements"));

  // Elements fit, bytes do not.
  t = TensorFromProto(Proto(DATA_TYPE_FLOAT64, {int64_t{1} << 61}, 0));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("float64 needs more than 2^63-1 bytes"));
}

TEST(TensorProtoTest, FromProtoRefusesAPieceOfAChunkedTensor) {
  DenseTensor proto = Proto(DATA_TYPE_FLOAT32, {4}, 8);
  proto.mutable_chunk()->set_offset(8);
  proto.mutable_chunk()->set_total_bytes(16);
  absl::StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("piece of a chunked tensor (offset 8"));
  EXPECT_THAT(t.status().message(), HasSubstr("TensorAssembler"));
}

TEST(TensorChunksTest, TensorThatFitsIsOnePieceWithoutChunk) {
  const Tensor t = RandomTensor(DATA_TYPE_FLOAT32, Shape({4, 4}), 3);
  for (size_t max : {size_t{64}, size_t{1000}}) {
    std::vector<DenseTensor> pieces = TensorToChunks(t, max);
    ASSERT_EQ(pieces.size(), 1u);
    EXPECT_FALSE(pieces[0].has_chunk());
    ExpectSameTensor(*TensorFromProto(pieces[0]), t);
    ExpectSameTensor(Assemble(pieces), t);
  }
}

TEST(TensorChunksTest, EmptyTensorIsOnePiece) {
  const Tensor t = *Tensor::Create(DATA_TYPE_FLOAT64, Shape({0, 16}));
  std::vector<DenseTensor> pieces = TensorToChunks(t, 8);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_FALSE(pieces[0].has_chunk());
  EXPECT_TRUE(pieces[0].data().empty());
  ExpectSameTensor(Assemble(pieces), t);
}

TEST(TensorChunksTest, ChunkedRoundTripIsBitExact) {
  struct Case {
    DataType dtype;
    Shape shape;
    size_t max_chunk_bytes;
    size_t expected_pieces;
  };
  const Case cases[] = {
      // 100 bytes in pieces of 32: 32, 32, 32, 4.
      {DATA_TYPE_FLOAT32, Shape({25}), 32, 4},
      // One byte more than a chunk.
      {DATA_TYPE_UINT8, Shape({33}), 32, 2},
      // An exact multiple of the chunk size.
      {DATA_TYPE_INT64, Shape({4, 8}), 64, 4},
      // 30 is not a multiple of 8: pieces of 24 bytes (3 whole elements).
      {DATA_TYPE_FLOAT64, Shape({10}), 30, 4},
      // A chunk smaller than one element: byte pieces.
      {DATA_TYPE_FLOAT64, Shape({3}), 5, 5},
      // Large and odd.
      {DATA_TYPE_INT32, Shape({333, 7}), 1000, 10},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(DataTypeName(c.dtype), " ", c.shape.DebugString(), " max ",
                              c.max_chunk_bytes));
    const Tensor t = RandomTensor(c.dtype, c.shape, c.max_chunk_bytes);
    EXPECT_EQ(TensorChunkCount(t, c.max_chunk_bytes), c.expected_pieces);
    std::vector<DenseTensor> pieces = TensorToChunks(t, c.max_chunk_bytes);
    ASSERT_EQ(pieces.size(), c.expected_pieces);
    const size_t element_size = *DataTypeSize(c.dtype);
    int64_t offset = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const DenseTensor& p = pieces[i];
      ASSERT_TRUE(p.has_chunk());
      EXPECT_EQ(p.dtype(), c.dtype);
      EXPECT_TRUE(ShapeEqualsProto(c.shape, p.shape()));
      EXPECT_EQ(p.chunk().offset(), offset);
      EXPECT_EQ(p.chunk().total_bytes(), static_cast<int64_t>(t.num_bytes()));
      EXPECT_LE(p.data().size(), c.max_chunk_bytes);
      EXPECT_GT(p.data().size(), 0u);
      if (c.max_chunk_bytes >= element_size) {
        EXPECT_EQ(p.data().size() % element_size, 0u) << "piece " << i;
      }
      offset += static_cast<int64_t>(p.data().size());
    }
    EXPECT_EQ(offset, static_cast<int64_t>(t.num_bytes()));
    ExpectSameTensor(Assemble(pieces), t);
  }
}

TEST(TensorChunksTest, ChunkToProtoMatchesToChunks) {
  const Tensor t = RandomTensor(DATA_TYPE_FLOAT32, Shape({50}), 4);
  const std::vector<DenseTensor> all = TensorToChunks(t, 64);
  DenseTensor piece;  // Reused, as a streaming sender would.
  for (size_t i = 0; i < all.size(); ++i) {
    TensorChunkToProto(t, 64, i, &piece);
    EXPECT_EQ(piece.SerializeAsString(), all[i].SerializeAsString()) << i;
  }
}

TEST(TensorChunksTest, ExactlyOneChunkOfDataIsOnePiece) {
  const Tensor t = RandomTensor(DATA_TYPE_INT32, Shape({16}), 5);
  std::vector<DenseTensor> pieces = TensorToChunks(t, 64);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_FALSE(pieces[0].has_chunk());
  ExpectSameTensor(Assemble(pieces), t);
}

// A single chunked piece covering everything is also a complete tensor
// (a sender may always chunk).
TEST(TensorAssemblerTest, AcceptsOneChunkedPieceCoveringAll) {
  const Tensor t = RandomTensor(DATA_TYPE_INT32, Shape({16}), 5);
  std::vector<DenseTensor> pieces = TensorToChunks(t, 64);
  pieces[0].mutable_chunk()->set_total_bytes(64);
  ExpectSameTensor(Assemble(pieces), t);
}

class TensorAssemblerRefusalTest : public ::testing::Test {
 protected:
  // float32 [10, 3]: 120 bytes, in pieces of 48, 48 and 24.
  TensorAssemblerRefusalTest()
      : tensor_(RandomTensor(DATA_TYPE_FLOAT32, Shape({10, 3}), 9)),
        pieces_(TensorToChunks(tensor_, 48)) {}

  // Adds pieces_[index] after modification, expecting a refusal containing
  // `message`; then checks the refusal changed nothing by finishing the
  // tensor with the untouched pieces from `index` on.
  void ExpectRefused(size_t index, const DenseTensor& bad, absl::StatusCode code,
                     const std::string& message) {
    TensorAssembler assembler;
    for (size_t i = 0; i < index; ++i) ASSERT_TRUE(assembler.Add(pieces_[i]).ok());
    const int64_t received = assembler.bytes_received();
    absl::Status status = assembler.Add(bad);
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(status.message(), HasSubstr(message));
    EXPECT_EQ(assembler.bytes_received(), received);
    for (size_t i = index; i < pieces_.size(); ++i) {
      ASSERT_TRUE(assembler.Add(pieces_[i]).ok()) << "piece " << i;
    }
    absl::StatusOr<Tensor> t = assembler.Finish();
    ASSERT_TRUE(t.ok()) << t.status();
    ExpectSameTensor(*t, tensor_);
  }

  void ExpectInvalid(size_t index, const DenseTensor& bad, const std::string& message) {
    ExpectRefused(index, bad, absl::StatusCode::kInvalidArgument, message);
  }

  Tensor tensor_;
  std::vector<DenseTensor> pieces_;
};

TEST_F(TensorAssemblerRefusalTest, PiecesAreAsExpected) {
  ASSERT_EQ(pieces_.size(), 3u);
  EXPECT_EQ(pieces_[2].data().size(), 24u);
}

TEST_F(TensorAssemblerRefusalTest, DtypeDiffersFromFirst) {
  DenseTensor bad = pieces_[1];
  bad.set_dtype(DATA_TYPE_INT32);
  ExpectInvalid(1, bad, "tensor piece 2 has dtype int32 (3), piece 1 had float32");
}

TEST_F(TensorAssemblerRefusalTest, ShapeDiffersFromFirst) {
  DenseTensor bad = pieces_[1];
  bad.mutable_shape()->set_dims(0, 3);
  bad.mutable_shape()->set_dims(1, 10);
  ExpectInvalid(1, bad, "tensor piece 2 has shape [3, 10], piece 1 had [10, 3]");
}

TEST_F(TensorAssemblerRefusalTest, TotalBytesDiffersFromFirst) {
  DenseTensor bad = pieces_[1];
  bad.mutable_chunk()->set_total_bytes(240);
  ExpectInvalid(1, bad, "tensor piece 2 says total_bytes 240, piece 1 said 120");
}

TEST_F(TensorAssemblerRefusalTest, Gap) {
  ExpectInvalid(1, pieces_[2],
                "tensor piece 2 starts at offset 96 but 48 bytes have arrived: "
                "bytes [48, 96) are missing");
}

TEST_F(TensorAssemblerRefusalTest, Overlap) {
  DenseTensor bad = pieces_[1];
  bad.mutable_chunk()->set_offset(40);
  ExpectInvalid(1, bad, "tensor piece 2 starts at offset 40, overlapping bytes [40, 48)");
}

TEST_F(TensorAssemblerRefusalTest, RepeatedPieceIsAnOverlap) {
  ExpectInvalid(1, pieces_[0], "tensor piece 2 starts at offset 0, overlapping bytes [0, 48)");
}

TEST_F(TensorAssemblerRefusalTest, BeyondTotalBytes) {
  DenseTensor bad = pieces_[2];
  bad.mutable_data()->append(8, 'x');
  ExpectInvalid(2, bad, "tensor piece 3 covers bytes [96, 128), beyond total_bytes 120");
}

TEST_F(TensorAssemblerRefusalTest, NegativeOffset) {
  DenseTensor bad = pieces_[1];
  bad.mutable_chunk()->set_offset(-8);
  ExpectInvalid(1, bad, "tensor piece 2 has negative offset -8");
}

TEST_F(TensorAssemblerRefusalTest, EmptyPiece) {
  DenseTensor bad = pieces_[1];
  bad.clear_data();
  ExpectInvalid(1, bad, "tensor piece 2 at offset 48 is empty");
}

TEST_F(TensorAssemblerRefusalTest, LaterPieceWithoutChunk) {
  DenseTensor bad = pieces_[1];
  bad.clear_chunk();
  ExpectInvalid(1, bad, "tensor piece 2 has no chunk, but piece 1 did");
}

TEST_F(TensorAssemblerRefusalTest, FirstPieceNotAtOffsetZero) {
  ExpectInvalid(0, pieces_[1], "tensor piece 1 starts at offset 48 but 0 bytes have arrived");
}

TEST_F(TensorAssemblerRefusalTest, TotalBytesDoesNotMatchShape) {
  DenseTensor bad = pieces_[0];
  bad.mutable_chunk()->set_total_bytes(100);
  ExpectInvalid(0, bad, "tensor piece 1 says total_bytes 100, shape [10, 3] float32 needs 120");
}

TEST_F(TensorAssemblerRefusalTest, FirstPieceWithBadDtype) {
  DenseTensor bad = pieces_[0];
  bad.set_dtype(DATA_TYPE_UNSPECIFIED);
  ExpectInvalid(0, bad, "piece 1: tensor dtype is unspecified");
}

TEST_F(TensorAssemblerRefusalTest, FirstPieceWithBadShape) {
  DenseTensor bad = pieces_[0];
  bad.mutable_shape()->set_dims(1, -3);
  ExpectInvalid(0, bad, "piece 1: tensor shape [10, -3] has negative dim -3 at index 1");
}

TEST_F(TensorAssemblerRefusalTest, TooLargeForTheLimit) {
  TensorAssembler assembler(/*max_total_bytes=*/100);
  absl::Status status = assembler.Add(pieces_[0]);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(),
              HasSubstr("shape [10, 3] float32 has 120 bytes, more than the limit of 100"));
  EXPECT_FALSE(assembler.Finish().ok());
}

TEST_F(TensorAssemblerRefusalTest, FinishBeforeComplete) {
  TensorAssembler assembler;
  ASSERT_TRUE(assembler.Add(pieces_[0]).ok());
  ASSERT_TRUE(assembler.Add(pieces_[1]).ok());
  EXPECT_FALSE(assembler.complete());
  absl::StatusOr<Tensor> t = assembler.Finish();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              HasSubstr("float32 [10, 3] is incomplete: received 96 of 120 bytes in 2 pieces"));
  // The pieces received are kept: the last one still completes the tensor.
  ASSERT_TRUE(assembler.Add(pieces_[2]).ok());
  ASSERT_TRUE(assembler.Finish().ok());
}

TEST_F(TensorAssemblerRefusalTest, FinishWithNothing) {
  TensorAssembler assembler;
  EXPECT_FALSE(assembler.complete());
  absl::StatusOr<Tensor> t = assembler.Finish();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("no tensor pieces were received"));
}

TEST_F(TensorAssemblerRefusalTest, PieceAfterComplete) {
  TensorAssembler assembler;
  for (const DenseTensor& p : pieces_) ASSERT_TRUE(assembler.Add(p).ok());
  absl::Status status = assembler.Add(pieces_[2]);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor piece 4 arrives after all 120 bytes"));
  ExpectSameTensor(*assembler.Finish(), tensor_);
}

TEST_F(TensorAssemblerRefusalTest, UnchunkedWithWrongDataSize) {
  TensorAssembler assembler;
  absl::Status status = assembler.Add(Proto(DATA_TYPE_FLOAT32, {2, 2}, 12));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("tensor data has 12 bytes, shape [2, 2] float32 needs 16"));
}

TEST(TensorAssemblerTest, IsReusableAfterFinish) {
  TensorAssembler assembler;
  for (int round = 0; round < 3; ++round) {
    const Tensor t = RandomTensor(DATA_TYPE_UINT8, Shape({100 + round}), round);
    for (const DenseTensor& p : TensorToChunks(t, 32)) ASSERT_TRUE(assembler.Add(p).ok());
    absl::StatusOr<Tensor> back = assembler.Finish();
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameTensor(*back, t);
    EXPECT_FALSE(assembler.complete());
    EXPECT_EQ(assembler.bytes_received(), 0);
  }
}

}  // namespace
}  // namespace pstrain
