#ifndef PSTRAIN_TESTS_FUZZ_REQUEST_SEQUENCE_H_
#define PSTRAIN_TESTS_FUZZ_REQUEST_SEQUENCE_H_

// The input of a request-handler fuzz target: a sequence of calls, each
//   u8 call kind, u16 length (little-endian), `length` bytes
// where the bytes are usually a serialized request proto. A record cut
// short by the end of the input takes the bytes that remain. The kinds
// are the target's own (each fuzzer names them); a kind past the last is
// taken modulo their count.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"

namespace pstrain {
namespace fuzz {

struct Call {
  uint8_t kind = 0;
  absl::string_view bytes;
};

// Splits `input` into calls, at most `max_calls` of them (the rest is
// ignored, which bounds the time one input takes).
std::vector<Call> SplitCalls(absl::string_view input, size_t max_calls);

// Appends one call to `out` (for writing seed inputs). `bytes` longer than
// 65535 are cut.
void AppendCall(uint8_t kind, absl::string_view bytes, std::string* out);
void AppendCall(uint8_t kind, const google::protobuf::MessageLite& request, std::string* out);

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_FUZZ_REQUEST_SEQUENCE_H_
