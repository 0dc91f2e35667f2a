#include "server/ps/pull_answer_wire.h"

#include "common/net/wire_bytes.h"
#include "glog/logging.h"
#include "grpc/slice.h"

namespace pstrain {
namespace {

constexpr int kResponsePullField = 3;  // PushPullResponse.pull
constexpr int kValuesField = 2;        // PullResponse.values

}  // namespace

grpc::Slice NewValueSlice(int64_t bytes) {
  CHECK_GT(bytes, 0);
  return grpc::Slice(grpc_slice_malloc_large(static_cast<size_t>(bytes)), grpc::Slice::STEAL_REF);
}

grpc::ByteBuffer PullAnswerBytes(uint64_t tag, const PullResponse& pull, PulledSlices slices) {
  WireBytes body;
  PullResponse version_only;  // field 1
  version_only.set_version(pull.version());
  body.AppendMessage(version_only);
  size_t next = 0;
  for (int i = 0; i < pull.values_size(); ++i) {
    if (next < slices.size() && slices[next].first == i) {
      body.AppendMessageField(kValuesField,
                              DenseTensorBytes(pull.values(i), std::move(slices[next].second)));
      ++next;
    } else {
      WireBytes own;
      own.AppendMessage(pull.values(i));
      body.AppendMessageField(kValuesField, std::move(own));
    }
  }
  CHECK_EQ(next, slices.size()) << "slices for values the answer does not have";
  PullResponse after_values = pull;  // fields 3 and later
  after_values.clear_version();
  after_values.clear_values();
  body.AppendMessage(after_values);

  PushPullResponse tag_only;  // field 1; pull (3) is the last field set
  tag_only.set_tag(tag);
  WireBytes out;
  out.AppendMessage(tag_only);
  out.AppendMessageField(kResponsePullField, std::move(body));
  return std::move(out).ToByteBuffer();
}

}  // namespace pstrain
