#include "common/net/wire_bytes.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace pstrain {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

constexpr int kNamedTensorDenseField = 2;  // NamedTensor.dense
constexpr int kDenseTensorDataField = 3;   // DenseTensor.data

std::string KeyAndLength(int field, size_t length) {
  const uint32_t key = WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  uint8_t buffer[16];
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(key, buffer);
  end = CodedOutputStream::WriteVarint64ToArray(length, end);
  return std::string(reinterpret_cast<const char*>(buffer), end - buffer);
}

}  // namespace

void WireBytes::AppendOwned(const std::string& bytes) {
  pending_ += bytes;
  size_ += bytes.size();
}

void WireBytes::AppendSlice(grpc::Slice slice) {
  if (slice.size() == 0) return;
  if (!pending_.empty()) {
    slices_.emplace_back(pending_);
    pending_.clear();
  }
  size_ += slice.size();
  slices_.push_back(std::move(slice));
}

void WireBytes::AppendMessage(const google::protobuf::MessageLite& message) {
  AppendOwned(message.SerializeAsString());
}

void WireBytes::AppendBytesField(int field, grpc::Slice bytes) {
  if (bytes.size() == 0) return;
  AppendOwned(KeyAndLength(field, bytes.size()));
  AppendSlice(std::move(bytes));
}

void WireBytes::AppendMessageField(int field, WireBytes body) {
  AppendOwned(KeyAndLength(field, body.size_));
  for (grpc::Slice& slice : body.slices_) AppendSlice(std::move(slice));
  AppendOwned(body.pending_);
}

grpc::ByteBuffer WireBytes::ToByteBuffer() && {
  if (!pending_.empty()) {
    slices_.emplace_back(pending_);
    pending_.clear();
  }
  return grpc::ByteBuffer(slices_.data(), slices_.size());
}

WireBytes DenseTensorBytes(const NamedTensor& tensor, grpc::Slice data) {
  const DenseTensor& dense = tensor.dense();
  DenseTensor before_data;  // fields 1-2
  before_data.set_dtype(dense.dtype());
  if (dense.has_shape()) *before_data.mutable_shape() = dense.shape();
  DenseTensor after_data = dense;  // fields 4 and later
  after_data.clear_dtype();
  after_data.clear_shape();
  after_data.clear_data();
  WireBytes dense_bytes;
  dense_bytes.AppendMessage(before_data);
  dense_bytes.AppendBytesField(kDenseTensorDataField, std::move(data));
  dense_bytes.AppendMessage(after_data);

  NamedTensor name_only;  // field 1; dense (2) is the last field set
  name_only.set_name(tensor.name());
  WireBytes out;
  out.AppendMessage(name_only);
  out.AppendMessageField(kNamedTensorDenseField, std::move(dense_bytes));
  return out;
}

std::string ByteBufferContents(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

}  // namespace pstrain
