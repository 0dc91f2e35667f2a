#ifndef PSTRAIN_COMMON_NET_HTTP_SERVER_H_
#define PSTRAIN_COMMON_NET_HTTP_SERVER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/http_message.h"
#include "common/net/server_tls.h"
#include "common/net/unique_fd.h"

namespace pstrain {

using HttpHandler = std::function<HttpResponse(const HttpRequest& request)>;

struct HttpServerOptions {
  // host:port to listen on; port 0 picks a free one.
  std::string address;
  // PEM certificate chain and key: serve HTTPS. Both empty (default): HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Threads answering requests, one connection each at a time. Default 2:
  // a scrape and a probe at once. Each has a stack of its own, which a
  // process under a data-segment cap (`ulimit -d`) pays for.
  int threads = 2;
  // Connections accepted but not yet taken by a thread; more are closed at
  // once. Default 64.
  size_t max_pending_connections = 64;
  // The longest a request may take to arrive, or a response to be taken,
  // before the connection is dropped (a stalled or idle client must not
  // hold a thread). Default 10 s.
  absl::Duration io_timeout = absl::Seconds(10);
  // A larger request head is 431, a larger body 413. Defaults 64 KiB, 1 MiB.
  size_t max_head_bytes = 64 << 10;
  size_t max_body_bytes = 1 << 20;
};

// A small HTTP/1.1 server (optionally HTTPS) for the pages every process
// serves beside gRPC: /metrics, and the coordinator's console. One request
// per connection (Connection: close), answered by the handler registered
// for the longest prefix of its path; no handler is 404, a malformed
// request 400. HEAD is answered as GET without the body. Thread-safe.
class HttpServer {
 public:
  // InvalidArgument: not host:port, or unusable TLS files (named).
  // Unavailable: the port cannot be bound (the message names the address).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options);

  // Stops accepting, finishes the requests being answered, joins.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Answers paths equal to `prefix` or, for a prefix ending in '/', under
  // it. A later handler for the same prefix replaces the earlier one. May be
  // called while serving.
  void Handle(const std::string& prefix, HttpHandler handler) ABSL_LOCKS_EXCLUDED(handlers_mu_);

  // host:port with the bound port.
  const std::string& address() const { return address_; }
  // "https" with TLS, else "http".
  const char* scheme() const { return tls_ != nullptr ? "https" : "http"; }

 private:
  HttpServer(HttpServerOptions options, UniqueFd listener, UniqueFd wake, std::string address,
             std::unique_ptr<ServerTls> tls);

  void AcceptLoop();
  void AnswerLoop();
  void Serve(UniqueFd connection);
  HttpResponse Dispatch(const HttpRequest& request) ABSL_LOCKS_EXCLUDED(handlers_mu_);

  // Constant after construction.
  const HttpServerOptions options_;
  const UniqueFd listener_;
  // An eventfd that wakes the accept loop to stop.
  const UniqueFd wake_;
  const std::string address_;
  // Null without TLS.
  const std::unique_ptr<ServerTls> tls_;

  absl::Mutex handlers_mu_;
  std::map<std::string, HttpHandler> handlers_ ABSL_GUARDED_BY(handlers_mu_);

  absl::Mutex pending_mu_;
  std::deque<UniqueFd> pending_ ABSL_GUARDED_BY(pending_mu_);
  bool stopping_ ABSL_GUARDED_BY(pending_mu_) = false;

  std::thread acceptor_;
  std::vector<std::thread> answerers_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HTTP_SERVER_H_
