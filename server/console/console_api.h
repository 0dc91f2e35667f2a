#ifndef PSTRAIN_SERVER_CONSOLE_CONSOLE_API_H_
#define PSTRAIN_SERVER_CONSOLE_CONSOLE_API_H_

#include <string>

#include "absl/time/time.h"
#include "common/net/http_message.h"
#include "common/net/token_auth.h"
#include "server/coordinator/coordinator.h"

namespace pstrain {
namespace console {

struct ConsoleApiOptions {
  // The coordinator's gRPC address, shown on the pages.
  std::string coordinator_address;
  // Whether POST /api/jobs/<id>/stop may stop a job. Default false: the
  // console only reads.
  bool allow_stop = false;
  // How long a member's /metrics may take, fetched for the cluster page.
  // Default 2 s.
  absl::Duration member_metrics_timeout = absl::Seconds(2);
};

// The JSON endpoints of the console (docs/console.md), over the
// coordinator's own calls: each answers the JobService message of the same
// data, printed with protobuf's JSON mapping (field names as in the .proto
// files, int64 as strings, enums by name), so a script reads what
// `pstrain` reads. With a client token, every endpoint but /api/console
// needs it as `Authorization: Bearer <token>`; a stop needs the client
// token itself and the header `X-Pstrain-Console: stop`, which a page of
// another site cannot send. Errors are {"error": "..."} with a 4xx or 5xx
// status. Thread-safe.
class ConsoleApi {
 public:
  // `coordinator` and `tokens` are borrowed.
  ConsoleApi(coordinator::Coordinator& coordinator, const TokenAuthenticator& tokens,
             ConsoleApiOptions options);

  // A request for a path under /api/.
  HttpResponse Answer(const HttpRequest& request) const;

 private:
  HttpResponse Route(const HttpRequest& request) const;
  HttpResponse ConsoleInfo() const;
  HttpResponse ListJobs(const HttpRequest& request) const;
  HttpResponse JobEvents(const std::string& job_id, const HttpRequest& request) const;
  HttpResponse StopJob(const std::string& job_id, const HttpRequest& request) const;
  HttpResponse MemberMetrics(const std::string& role, const std::string& index) const;

  coordinator::Coordinator& coordinator_;
  const TokenAuthenticator& tokens_;
  const ConsoleApiOptions options_;
};

}  // namespace console
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_CONSOLE_CONSOLE_API_H_
