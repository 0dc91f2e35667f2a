#ifndef PSTRAIN_COMMON_NET_TESTING_HTTPS_GET_H_
#define PSTRAIN_COMMON_NET_TESTING_HTTPS_GET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pstrain {

struct HttpsAnswer {
  int status = 0;
  std::string head;  // the status line and headers
  std::string body;
};

// A GET of https://<address><target> for tests, the server's certificate
// verified against `ca_file` for the name 127.0.0.1, with `headers` ("Name:
// value") added. Unavailable: no connection or no handshake (the message
// says which). Internal: not an HTTP answer.
absl::StatusOr<HttpsAnswer> HttpsGet(const std::string& address, const std::string& target,
                                     const std::string& ca_file,
                                     const std::vector<std::string>& headers = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_TESTING_HTTPS_GET_H_
