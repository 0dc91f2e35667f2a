#ifndef PSTRAIN_SERVER_CONSOLE_CONSOLE_H_
#define PSTRAIN_SERVER_CONSOLE_CONSOLE_H_

#include <memory>

#include "common/net/http_server.h"
#include "common/net/token_auth.h"
#include "server/console/console_api.h"
#include "server/coordinator/coordinator.h"

namespace pstrain {
namespace console {

// The coordinator's web console (docs/console.md), served on an
// HttpServer beside /metrics: the pages (console_pages.h) and the JSON
// endpoints under /api/ (console_api.h). Thread-safe.
class Console {
 public:
  // Serves on `http` from now on. `http` and `coordinator` are borrowed;
  // the server may outlive the console.
  Console(HttpServer& http, coordinator::Coordinator& coordinator, TokenAuthenticator tokens,
          ConsoleApiOptions options);
  // Requests that arrive from now on are answered 503; those being
  // answered are waited for, so the coordinator may go next.
  ~Console();

  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

 private:
  class Gate;

  const TokenAuthenticator tokens_;
  const ConsoleApi api_;
  const std::shared_ptr<Gate> gate_;
};

}  // namespace console
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_CONSOLE_CONSOLE_H_
