#ifndef PSTRAIN_COMMON_NET_HTTP_GET_H_
#define PSTRAIN_COMMON_NET_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {

// A plain HTTP/1.0 GET of http://<address><path>, for reading a process's
// /metrics page from the CLI and tests without a client library.
// Returns the body of a 200 response. Unavailable: cannot connect.
// DeadlineExceeded: no full answer within `timeout`. Internal: a status
// other than 200 (named in the message) or a malformed response.
absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path,
                                    absl::Duration timeout);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HTTP_GET_H_
