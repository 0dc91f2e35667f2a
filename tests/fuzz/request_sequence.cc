#include "tests/fuzz/request_sequence.h"

#include <algorithm>

namespace pstrain {
namespace fuzz {

std::vector<Call> SplitCalls(absl::string_view input, size_t max_calls) {
  std::vector<Call> calls;
  while (input.size() >= 3 && calls.size() < max_calls) {
    Call call;
    call.kind = static_cast<uint8_t>(input[0]);
    const size_t length =
        static_cast<uint8_t>(input[1]) | (size_t{static_cast<uint8_t>(input[2])} << 8);
    input.remove_prefix(3);
    call.bytes = input.substr(0, std::min(length, input.size()));
    input.remove_prefix(call.bytes.size());
    calls.push_back(call);
  }
  return calls;
}

void AppendCall(uint8_t kind, absl::string_view bytes, std::string* out) {
  bytes = bytes.substr(0, 0xffff);
  out->push_back(static_cast<char>(kind));
  out->push_back(static_cast<char>(bytes.size() & 0xff));
  out->push_back(static_cast<char>(bytes.size() >> 8));
  out->append(bytes.data(), bytes.size());
}

void AppendCall(uint8_t kind, const google::protobuf::MessageLite& request, std::string* out) {
  AppendCall(kind, request.SerializeAsString(), out);
}

}  // namespace fuzz
}  // namespace pstrain
