#include "worker/internal/outgoing_request.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/net/wire_bytes.h"
#include "glog/logging.h"
#include "grpcpp/support/slice.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

constexpr int kRequestPushField = 2;  // PushPullRequest.push
constexpr int kGradientsField = 4;    // PushRequest.gradients

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

grpc::ByteBuffer SerializeRequest(const OutgoingRequest& request) {
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
  for (int i = 0; i < push.gradients_size(); ++i) {
    const NamedTensor& gradient = push.gradients(i);
    const bool borrow = static_cast<size_t>(i) < request.dense_data.size() &&
                        !request.dense_data[i].empty() && gradient.has_dense();
    if (!borrow) {
      WireBytes own;
      own.AppendMessage(gradient);
      push_bytes.AppendMessageField(kGradientsField, std::move(own));
      continue;
    }
    // grpc::Slice(const void*, size_t) copies: the slice owns its bytes.
    const absl::Span<const char> data = request.dense_data[i];
    grpc::Slice slice(data.data(), data.size());
    push_bytes.AppendMessageField(kGradientsField, DenseTensorBytes(gradient, std::move(slice)));
  }
  push_bytes.AppendMessage(after_gradients);

  PushPullRequest tag_only;  // field 1
  tag_only.set_tag(request.message.tag());
  PushPullRequest after_push;  // fields 4 and later
  if (request.message.has_lane()) *after_push.mutable_lane() = request.message.lane();
  WireBytes out;
  out.AppendMessage(tag_only);
  out.AppendMessageField(kRequestPushField, std::move(push_bytes));
  out.AppendMessage(after_push);
  return std::move(out).ToByteBuffer();
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
