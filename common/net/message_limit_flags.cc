#include "common/net/message_limit_flags.h"

#include "absl/strings/str_cat.h"
#include "common/net/channel_security.h"
#include "gflags/gflags.h"

DEFINE_int32(max_message_mb, pstrain::kDefaultMaxMessageBytes >> 20,
             "Largest gRPC message sent or received, in MiB, by the server and by every "
             "channel to a peer; a larger one is refused with RESOURCE_EXHAUSTED naming this "
             "flag. Pushes and pulls travel in chunks of about 1 MiB, so the default leaves "
             "four times the room the largest message needs. Give every process of a cluster "
             "the same value.");

namespace pstrain {

absl::StatusOr<int> MaxMessageBytesFromFlags() {
  if (FLAGS_max_message_mb < 1 || FLAGS_max_message_mb > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_mb must be in [1, 1024], got ", FLAGS_max_message_mb));
  }
  return FLAGS_max_message_mb << 20;
}

}  // namespace pstrain
