#include "server/console/console_pages.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "server/console/console_assets.h"

namespace pstrain {
namespace console {
namespace {

// Everything comes from the coordinator itself; nothing may frame the
// console (a page of another site cannot trick a click on Stop).
void AddSecurityHeaders(HttpResponse& response) {
  response.headers.push_back(
      {"Content-Security-Policy",
       "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"});
  response.headers.push_back({"X-Content-Type-Options", "nosniff"});
  response.headers.push_back({"Referrer-Policy", "no-referrer"});
}

std::string EscapeHtml(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

HttpResponse ErrorPage(int status, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/html; charset=utf-8";
  response.body = absl::StrCat(
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>",
      HttpReasonPhrase(status), " - pstrain console</title>",
      "<link rel=\"stylesheet\" href=\"/console.css\"></head><body><main class=\"error-page\">",
      "<h1>", status, " ", HttpReasonPhrase(status), "</h1><p>", EscapeHtml(message),
      "</p><p><a href=\"/\">Jobs</a> &middot; <a href=\"/cluster\">Cluster</a></p>",
      "</main></body></html>\n");
  return response;
}

HttpResponse Asset(absl::string_view name) {
  const ConsoleAsset* asset = FindConsoleAsset(name);
  HttpResponse response;
  response.content_type = std::string(asset->content_type);
  response.body = std::string(asset->body);
  // The assets change only with the binary; a reload after an upgrade must
  // not mix an old script with a new page.
  response.headers.push_back({"Cache-Control", "no-cache"});
  return response;
}

bool IsPagePath(const std::string& path) {
  if (path == "/" || path == "/cluster") return true;
  // /jobs/<job>: one segment, which the page's script reads.
  constexpr absl::string_view kJobs = "/jobs/";
  return absl::StartsWith(path, kJobs) && path.size() > kJobs.size() &&
         path.find('/', kJobs.size()) == std::string::npos;
}

}  // namespace

HttpResponse AnswerConsolePage(const HttpRequest& request) {
  HttpResponse response;
  if (request.method != "GET") {
    response = ErrorPage(
        405, absl::StrCat(request.method, " ", request.path, ": the console's pages answer GET"));
  } else if (IsPagePath(request.path)) {
    response = Asset("index.html");
  } else if (request.path == "/console.js" || request.path == "/console.css") {
    response = Asset(absl::string_view(request.path).substr(1));
  } else {
    response = ErrorPage(404, absl::StrCat("There is no page ", request.path,
                                           ". The console has the jobs (/), one job "
                                           "(/jobs/<job id>) and the cluster (/cluster)."));
  }
  AddSecurityHeaders(response);
  return response;
}

}  // namespace console
}  // namespace pstrain
