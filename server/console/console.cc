#include "server/console/console.h"

#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/console/console_pages.h"

namespace pstrain {
namespace console {

// Lets requests reach the console while it lives, and its destructor wait
// for those in progress. Shared with the server's handlers, which may be
// called after the console is gone.
class Console::Gate {
 public:
  // False once closed: the request must not touch the console.
  bool Enter() {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    ++inside_;
    return true;
  }

  void Leave() {
    absl::MutexLock lock(&mu_);
    --inside_;
  }

  void CloseAndWait() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    mu_.Await(absl::Condition(
        +[](int* inside) { return *inside == 0; }, &inside_));
  }

  // Answers with `answer` while open, else 503.
  HttpResponse Pass(const HttpRequest& request,
                    const std::function<HttpResponse(const HttpRequest&)>& answer) {
    if (!Enter()) return HttpResponse::Text(503, "the coordinator is shutting down\n");
    HttpResponse response = answer(request);
    Leave();
    return response;
  }

 private:
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int inside_ ABSL_GUARDED_BY(mu_) = 0;
};

Console::Console(HttpServer& http, coordinator::Coordinator& coordinator, TokenAuthenticator tokens,
                 ConsoleApiOptions options)
    : tokens_(std::move(tokens)),
      api_(coordinator, tokens_, std::move(options)),
      gate_(std::make_shared<Gate>()) {
  http.Handle("/", [gate = gate_](const HttpRequest& request) {
    return gate->Pass(request, AnswerConsolePage);
  });
  http.Handle("/api/", [gate = gate_, api = &api_](const HttpRequest& request) {
    return gate->Pass(request, [api](const HttpRequest& r) { return api->Answer(r); });
  });
}

Console::~Console() { gate_->CloseAndWait(); }

}  // namespace console
}  // namespace pstrain
