#ifndef PSTRAIN_COMMON_NET_HTTP_MESSAGE_H_
#define PSTRAIN_COMMON_NET_HTTP_MESSAGE_H_

// The HTTP/1.1 requests and responses of HttpServer (http_server.h): what a
// handler reads and returns, and their wire form.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  // The path, percent-decoded, without the query: "/jobs/mnist-1".
  std::string path;
  // The query's parameters, percent-decoded ("a=1&b" gives a:1, b:"").
  std::map<std::string, std::string> query;
  // Header names in lower case; a repeated header keeps its last value.
  std::map<std::string, std::string> headers;
  std::string body;

  // The header's value, nullopt when absent. `name` in lower case.
  std::optional<absl::string_view> Header(absl::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Further headers, e.g. {"Cache-Control", "no-store"}.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Text(int status, std::string body);
  static HttpResponse Json(int status, std::string body);
};

// The request line and headers (everything before the blank line, which
// `head` does not include), without the body.
// InvalidArgument: not an HTTP/1.x request, a malformed header, a bad
// percent escape (the message names what).
absl::StatusOr<HttpRequest> ParseHttpRequestHead(absl::string_view head);

// "%2F" and the like decoded; with `plus_is_space` (a query) "+" is a
// space. InvalidArgument: a '%' not followed by two hex digits.
absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space);

// The status line, the headers (Content-Type, Content-Length, Connection:
// close, the response's own, and for a HEAD request no body) and the body.
std::string FormatHttpResponse(const HttpResponse& response, bool head_only);

// "OK", "Not Found", ... for the codes HttpServer's handlers use.
absl::string_view HttpReasonPhrase(int status);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HTTP_MESSAGE_H_
