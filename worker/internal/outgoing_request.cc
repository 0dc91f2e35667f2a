#include "worker/internal/outgoing_request.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "grpcpp/support/slice.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

using google::protobuf::io::CodedOutputStream;
using google::protobuf::internal::WireFormatLite;

// Field numbers on the path from a PushPullRequest to a dense gradient's
// bytes (protos/parameter_server.proto, protos/tensor.proto).
constexpr int kRequestPushField = 2;   // PushPullRequest.push
constexpr int kGradientsField = 4;     // PushRequest.gradients
constexpr int kDenseField = 2;         // NamedTensor.dense
constexpr int kDataField = 3;          // DenseTensor.data

// A byte string made of owned pieces and borrowed spans, in order.
class WireBytes {
 public:
  void AppendOwned(const std::string& bytes) {
    if (bytes.empty()) return;
    if (pieces_.empty() || !pieces_.back().borrowed.empty()) pieces_.emplace_back();
    pieces_.back().owned += bytes;
    size_ += bytes.size();
  }
  void AppendBorrowed(absl::Span<const char> bytes) {
    if (bytes.empty()) return;
    pieces_.push_back({std::string(), bytes});
    size_ += bytes.size();
  }
  void AppendMessage(const google::protobuf::MessageLite& m) { AppendOwned(m.SerializeAsString()); }
  // Field `field` of wire type LEN holding `body`.
  void AppendLengthDelimited(int field, WireBytes body) {
    std::string head;
    AppendKeyAndLength(field, body.size_, &head);
    AppendOwned(head);
    for (Piece& piece : body.pieces_) {
      if (piece.borrowed.empty()) {
        AppendOwned(piece.owned);
      } else {
        AppendBorrowed(piece.borrowed);
      }
    }
  }
  void AppendBorrowedField(int field, absl::Span<const char> bytes) {
    if (bytes.empty()) return;  // proto3 leaves empty bytes out
    std::string head;
    AppendKeyAndLength(field, bytes.size(), &head);
    AppendOwned(head);
    AppendBorrowed(bytes);
  }

  grpc::ByteBuffer ToByteBuffer(BorrowedSlices* borrowed, void (*release)(void*)) const {
    std::vector<grpc::Slice> slices;
    slices.reserve(pieces_.size());
    for (const Piece& piece : pieces_) {
      if (piece.borrowed.empty()) {
        slices.emplace_back(piece.owned);  // copies the few header bytes
      } else {
        CHECK(borrowed != nullptr) << "borrowed bytes need a BorrowedSlices";
        // gRPC's slices take non-const memory but never write to it.
        slices.emplace_back(const_cast<char*>(piece.borrowed.data()), piece.borrowed.size(),
                            release, borrowed);
      }
    }
    return grpc::ByteBuffer(slices.data(), slices.size());
  }

  size_t size() const { return size_; }

 private:
  struct Piece {
    std::string owned;
    absl::Span<const char> borrowed;
  };
  static void AppendKeyAndLength(int field, size_t length, std::string* out) {
    const uint32_t key = WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    char buffer[16];
    uint8_t* end = CodedOutputStream::WriteVarint32ToArray(key, reinterpret_cast<uint8_t*>(buffer));
    end = CodedOutputStream::WriteVarint64ToArray(length, end);
    out->append(buffer, reinterpret_cast<char*>(end) - buffer);
  }

  std::vector<Piece> pieces_;
  size_t size_ = 0;
};

// One gradient whose dense bytes are borrowed, in field order: name, then
// dense { dtype, shape, data, chunk }.
WireBytes GradientBytes(const NamedTensor& gradient, absl::Span<const char> data) {
  const DenseTensor& dense = gradient.dense();
  DenseTensor before_data;  // fields 1-2
  before_data.set_dtype(dense.dtype());
  if (dense.has_shape()) *before_data.mutable_shape() = dense.shape();
  DenseTensor after_data = dense;  // fields 4 and later
  after_data.clear_dtype();
  after_data.clear_shape();
  after_data.clear_data();
  WireBytes dense_bytes;
  dense_bytes.AppendMessage(before_data);
  dense_bytes.AppendBorrowedField(kDataField, data);
  dense_bytes.AppendMessage(after_data);

  NamedTensor name_only;  // field 1; dense (2) is the last field set
  name_only.set_name(gradient.name());
  WireBytes out;
  out.AppendMessage(name_only);
  out.AppendLengthDelimited(kDenseField, std::move(dense_bytes));
  return out;
}

bool Borrows(const OutgoingRequest& request) {
  if (!request.message.has_push()) return false;
  for (size_t i = 0; i < request.dense_data.size(); ++i) {
    if (!request.dense_data[i].empty()) return true;
  }
  return false;
}

}  // namespace

PushPullRequest OutgoingRequest::Materialize() const {
  PushPullRequest out = message;
  if (!out.has_push()) return out;
  PushRequest* push = out.mutable_push();
  for (size_t i = 0; i < dense_data.size() && static_cast<int>(i) < push->gradients_size(); ++i) {
    if (dense_data[i].empty()) continue;
    push->mutable_gradients(static_cast<int>(i))
        ->mutable_dense()
        ->set_data(dense_data[i].data(), dense_data[i].size());
  }
  return out;
}

BorrowedSlices::~BorrowedSlices() {
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(
      +[](int64_t* live) { return *live == 0; }, &live_));
}

int64_t BorrowedSlices::live() const {
  absl::MutexLock l(&mu_);
  return live_;
}

absl::Status BorrowedSlices::WaitUntilReleased(absl::Time deadline) const {
  absl::MutexLock l(&mu_);
  const int64_t* live = &live_;
  if (mu_.AwaitWithDeadline(absl::Condition(
                                +[](const int64_t* n) { return *n == 0; }, live),
                            deadline)) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(
      absl::StrCat(live_, " slices of borrowed gradient bytes are still held by gRPC"));
}

void BorrowedSlices::Release(void* self) {
  auto* slices = static_cast<BorrowedSlices*>(self);
  absl::MutexLock l(&slices->mu_);
  --slices->live_;
}

grpc::ByteBuffer SerializeRequest(const OutgoingRequest& request, BorrowedSlices* borrowed) {
  if (!Borrows(request)) {
    const std::string bytes = request.message.SerializeAsString();
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
  }
  const PushRequest& push = request.message.push();
  PushRequest before_gradients;  // fields 1-3
  before_gradients.set_job_id(push.job_id());
  if (push.has_id()) *before_gradients.mutable_id() = push.id();
  before_gradients.set_base_version(push.base_version());
  PushRequest after_gradients = push;  // fields 5 and later
  after_gradients.clear_job_id();
  after_gradients.clear_id();
  after_gradients.clear_base_version();
  after_gradients.clear_gradients();

  WireBytes push_bytes;
  push_bytes.AppendMessage(before_gradients);
  int64_t borrowed_slices = 0;
  for (int i = 0; i < push.gradients_size(); ++i) {
    const NamedTensor& gradient = push.gradients(i);
    const bool borrow = static_cast<size_t>(i) < request.dense_data.size() &&
                        !request.dense_data[i].empty() && gradient.has_dense();
    if (borrow) {
      ++borrowed_slices;
      push_bytes.AppendLengthDelimited(kGradientsField,
                                       GradientBytes(gradient, request.dense_data[i]));
    } else {
      WireBytes own;
      own.AppendMessage(gradient);
      push_bytes.AppendLengthDelimited(kGradientsField, std::move(own));
    }
  }
  push_bytes.AppendMessage(after_gradients);

  PushPullRequest tag_only;  // field 1; push (2) is the last field set
  tag_only.set_tag(request.message.tag());
  WireBytes out;
  out.AppendMessage(tag_only);
  out.AppendLengthDelimited(kRequestPushField, std::move(push_bytes));

  {
    absl::MutexLock l(&borrowed->mu_);
    borrowed->live_ += borrowed_slices;
  }
  return out.ToByteBuffer(borrowed, &BorrowedSlices::Release);
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
