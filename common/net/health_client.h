#ifndef PSTRAIN_COMMON_NET_HEALTH_CLIENT_H_
#define PSTRAIN_COMMON_NET_HEALTH_CLIENT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"

namespace pstrain {

// Asks the gRPC health service at `address` (host:port) whether it serves
// `service` ("" = the whole server), waiting at most `timeout`.
// OK: SERVING. FailedPrecondition: it answered NOT_SERVING (or another
// non-serving state). Otherwise the call's own error (Unavailable when
// nothing listens, DeadlineExceeded on timeout). `security` gives the TLS
// credentials (a server under mutual TLS wants a client certificate even for
// health checks); health checks need no token.
absl::Status CheckHealth(const std::string& address, absl::Duration timeout,
                         const std::string& service = "", const ChannelSecurity& security = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HEALTH_CLIENT_H_
