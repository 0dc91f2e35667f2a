#include "common/net/http_message.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::map<std::string, std::string>> ParseQuery(absl::string_view query) {
  std::map<std::string, std::string> parameters;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const std::pair<absl::string_view, absl::string_view> name_value =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    ASSIGN_OR_RETURN(std::string name, PercentDecode(name_value.first, true));
    ASSIGN_OR_RETURN(std::string value, PercentDecode(name_value.second, true));
    parameters[std::move(name)] = std::move(value);
  }
  return parameters;
}

}  // namespace

std::optional<absl::string_view> HttpRequest::Header(absl::string_view name) const {
  auto found = headers.find(std::string(name));
  if (found == headers.end()) return std::nullopt;
  return absl::string_view(found->second);
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      decoded.push_back(' ');
    } else if (c != '%') {
      decoded.push_back(c);
    } else {
      const int high = i + 1 < text.size() ? HexValue(text[i + 1]) : -1;
      const int low = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (high < 0 || low < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad percent escape in '", text, "' at offset ", i));
      }
      decoded.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    }
  }
  return decoded;
}

absl::StatusOr<HttpRequest> ParseHttpRequestHead(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  const std::vector<absl::string_view> request_line = absl::StrSplit(lines.front(), ' ');
  if (request_line.size() != 3 || !absl::StartsWith(request_line[2], "HTTP/1.") ||
      request_line[0].empty() || !absl::StartsWith(request_line[1], "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an HTTP/1.x request line: '", lines.front().substr(0, 200), "'"));
  }
  HttpRequest request;
  request.method = std::string(request_line[0]);
  const std::pair<absl::string_view, absl::string_view> path_query =
      absl::StrSplit(request_line[1], absl::MaxSplits('?', 1));
  ASSIGN_OR_RETURN(request.path, PercentDecode(path_query.first, false));
  ASSIGN_OR_RETURN(request.query, ParseQuery(path_query.second));
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed header line: '", lines[i].substr(0, 200), "'"));
    }
    request.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  return request;
}

absl::string_view HttpReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return status < 400 ? "OK" : "Error";
  }
}

std::string FormatHttpResponse(const HttpResponse& response, bool head_only) {
  std::string wire = absl::StrCat("HTTP/1.1 ", response.status, " ",
                                  HttpReasonPhrase(response.status), "\r\nContent-Type: ",
                                  response.content_type, "\r\nContent-Length: ",
                                  response.body.size(), "\r\nConnection: close\r\n");
  for (const auto& [name, value] : response.headers) absl::StrAppend(&wire, name, ": ", value, "\r\n");
  wire += "\r\n";
  if (!head_only) wire += response.body;
  return wire;
}

}  // namespace pstrain
