#include "common/net/http_server.h"

#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/net/host_port.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

// The bytes of one connection, plain or through TLS.
class Stream {
 public:
  virtual ~Stream() = default;
  // 0: the peer closed. Unavailable: broken or timed out.
  virtual absl::StatusOr<size_t> Read(char* data, size_t size) = 0;
  virtual absl::Status Write(absl::string_view data) = 0;
};

class PlainStream : public Stream {
 public:
  explicit PlainStream(int fd) : fd_(fd) {}

  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    ssize_t read;
    do {
      read = ::recv(fd_, data, size, 0);
    } while (read < 0 && errno == EINTR);
    if (read < 0) return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
    return static_cast<size_t>(read);
  }

  absl::Status Write(absl::string_view data) override {
    while (!data.empty()) {
      const ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0) return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
      data.remove_prefix(static_cast<size_t>(sent));
    }
    return absl::OkStatus();
  }

 private:
  const int fd_;
};

class TlsStream : public Stream {
 public:
  explicit TlsStream(std::unique_ptr<TlsSession> session) : session_(std::move(session)) {}
  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    return session_->Read(data, size);
  }
  absl::Status Write(absl::string_view data) override { return session_->Write(data); }

 private:
  const std::unique_ptr<TlsSession> session_;
};

absl::StatusOr<UniqueFd> Listen(const HostPort& endpoint, const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* resolved = nullptr;
  const std::string port = absl::StrCat(endpoint.port);
  const char* host = endpoint.host.empty() ? nullptr : endpoint.host.c_str();
  if (int error = ::getaddrinfo(host, port.c_str(), &hints, &resolved)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve HTTP on ", address, ": ", ::gai_strerror(error)));
  }
  std::string failure = "no address";
  UniqueFd listener;
  for (addrinfo* candidate = resolved; candidate != nullptr; candidate = candidate->ai_next) {
    UniqueFd fd(::socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC,
                         candidate->ai_protocol));
    if (!fd.valid()) {
      failure = std::strerror(errno);
      continue;
    }
    const int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd.get(), candidate->ai_addr, candidate->ai_addrlen) != 0 ||
        ::listen(fd.get(), 128) != 0) {
      failure = std::strerror(errno);
      continue;
    }
    listener = std::move(fd);
    break;
  }
  ::freeaddrinfo(resolved);
  if (!listener.valid()) {
    return absl::UnavailableError(absl::StrCat("cannot serve HTTP on ", address, ": ", failure));
  }
  return listener;
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  if (bound.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

void SetTimeouts(int fd, absl::Duration timeout) {
  const timeval value = absl::ToTimeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, sizeof(value));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, sizeof(value));
}

// A request that cannot be answered by a handler: the status and why.
HttpResponse Refusal(int status, absl::string_view why) {
  return HttpResponse::Text(status, absl::StrCat(why, "\n"));
}

// Reads the request from `stream`: its head up to the blank line, then a
// Content-Length body. Sets `*refusal` instead when the request is
// malformed or too large; returns nullopt, with neither, when the client
// went away.
std::optional<HttpRequest> ReadRequest(Stream& stream, const HttpServerOptions& options,
                                       std::optional<HttpResponse>* refusal) {
  std::string received;
  size_t head_end = std::string::npos;
  char buffer[8192];
  while ((head_end = received.find("\r\n\r\n")) == std::string::npos) {
    if (received.size() > options.max_head_bytes) {
      *refusal = Refusal(431, "request head too large");
      return std::nullopt;
    }
    absl::StatusOr<size_t> read = stream.Read(buffer, sizeof(buffer));
    if (!read.ok() || *read == 0) return std::nullopt;
    received.append(buffer, *read);
  }
  absl::StatusOr<HttpRequest> request =
      ParseHttpRequestHead(absl::string_view(received).substr(0, head_end));
  if (!request.ok()) {
    *refusal = Refusal(400, request.status().message());
    return std::nullopt;
  }
  if (request->Header("transfer-encoding").has_value()) {
    *refusal = Refusal(411, "chunked request bodies are not accepted: send Content-Length");
    return std::nullopt;
  }
  size_t body_size = 0;
  if (std::optional<absl::string_view> length = request->Header("content-length")) {
    if (!absl::SimpleAtoi(*length, &body_size)) {
      *refusal = Refusal(400, absl::StrCat("bad Content-Length '", *length, "'"));
      return std::nullopt;
    }
  }
  if (body_size > options.max_body_bytes) {
    *refusal = Refusal(413, absl::StrCat("request body of ", body_size, " bytes; at most ",
                                         options.max_body_bytes));
    return std::nullopt;
  }
  request->body = received.substr(head_end + 4);
  while (request->body.size() < body_size) {
    absl::StatusOr<size_t> read = stream.Read(buffer, sizeof(buffer));
    if (!read.ok() || *read == 0) return std::nullopt;
    request->body.append(buffer, *read);
  }
  request->body.resize(body_size);
  return *std::move(request);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options) {
  ASSIGN_OR_RETURN(HostPort endpoint, ParseHostPort(options.address));
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("HTTPS needs both a certificate and a key file");
  }
  std::unique_ptr<ServerTls> tls;
  if (!options.tls_cert_file.empty()) {
    ASSIGN_OR_RETURN(tls, ServerTls::Create(options.tls_cert_file, options.tls_key_file));
  }
  ASSIGN_OR_RETURN(UniqueFd listener, Listen(endpoint, options.address));
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
  if (!wake.valid()) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  endpoint.port = BoundPort(listener.get());
  std::unique_ptr<HttpServer> server(new HttpServer(
      std::move(options), std::move(listener), std::move(wake), endpoint.ToString(), std::move(tls)));
  server->acceptor_ = std::thread([raw = server.get()] { raw->AcceptLoop(); });
  for (int i = 0; i < std::max(1, server->options_.threads); ++i) {
    server->answerers_.emplace_back([raw = server.get()] { raw->AnswerLoop(); });
  }
  return server;
}

HttpServer::HttpServer(HttpServerOptions options, UniqueFd listener, UniqueFd wake,
                       std::string address, std::unique_ptr<ServerTls> tls)
    : options_(std::move(options)),
      listener_(std::move(listener)),
      wake_(std::move(wake)),
      address_(std::move(address)),
      tls_(std::move(tls)) {}

HttpServer::~HttpServer() {
  const uint64_t one = 1;
  if (::write(wake_.get(), &one, sizeof(one)) != sizeof(one)) {
    LOG(ERROR) << "cannot wake the HTTP accept loop: " << std::strerror(errno);
  }
  acceptor_.join();
  {
    absl::MutexLock lock(&pending_mu_);
    stopping_ = true;
  }
  for (std::thread& answerer : answerers_) answerer.join();
}

void HttpServer::Handle(const std::string& prefix, HttpHandler handler) {
  absl::MutexLock lock(&handlers_mu_);
  handlers_[prefix] = std::move(handler);
}

void HttpServer::AcceptLoop() {
  pollfd watched[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  while (true) {
    if (::poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "HTTP server on " << address_ << ": poll: " << std::strerror(errno);
      return;
    }
    if (watched[1].revents != 0) return;
    UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection.valid()) continue;  // the client gave up, or out of descriptors for now
    absl::MutexLock lock(&pending_mu_);
    // A flood of connections is shed here rather than queued without end.
    if (pending_.size() < options_.max_pending_connections) {
      pending_.push_back(std::move(connection));
    }
  }
}

void HttpServer::AnswerLoop() {
  // OpenSSL writes with write(2): a peer gone mid-answer raises SIGPIPE,
  // which must fail that write, not end the process. Blocked here, it stays
  // with this thread.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  while (true) {
    UniqueFd connection;
    {
      absl::MutexLock lock(&pending_mu_);
      pending_mu_.Await(absl::Condition(
          +[](HttpServer* server) ABSL_EXCLUSIVE_LOCKS_REQUIRED(server->pending_mu_) {
            return server->stopping_ || !server->pending_.empty();
          },
          this));
      if (pending_.empty()) return;  // stopping, nothing left to answer
      connection = std::move(pending_.front());
      pending_.pop_front();
    }
    Serve(std::move(connection));
  }
}

void HttpServer::Serve(UniqueFd connection) {
  SetTimeouts(connection.get(), options_.io_timeout);
  std::unique_ptr<Stream> stream;
  if (tls_ != nullptr) {
    absl::StatusOr<std::unique_ptr<TlsSession>> session = tls_->Accept(connection.get());
    if (!session.ok()) {
      VLOG(1) << "HTTPS on " << address_ << ": " << session.status().message();
      return;
    }
    stream = std::make_unique<TlsStream>(*std::move(session));
  } else {
    stream = std::make_unique<PlainStream>(connection.get());
  }
  std::optional<HttpResponse> refusal;
  std::optional<HttpRequest> request = ReadRequest(*stream, options_, &refusal);
  if (!request.has_value() && !refusal.has_value()) return;
  const HttpResponse response = request.has_value() ? Dispatch(*request) : *refusal;
  const bool head_only = request.has_value() && request->method == "HEAD";
  stream->Write(FormatHttpResponse(response, head_only)).IgnoreError();  // the client left
  ::shutdown(connection.get(), SHUT_WR);
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) {
  HttpHandler handler;
  {
    absl::MutexLock lock(&handlers_mu_);
    size_t longest = 0;
    for (const auto& [prefix, candidate] : handlers_) {
      const bool matches =
          request.path == prefix ||
          (!prefix.empty() && prefix.back() == '/' && request.path.rfind(prefix, 0) == 0);
      if (matches && prefix.size() >= longest) {
        longest = prefix.size();
        handler = candidate;
      }
    }
  }
  if (!handler) return Refusal(404, absl::StrCat("nothing is served at ", request.path));
  if (request.method == "HEAD") {
    HttpRequest get = request;
    get.method = "GET";
    return handler(get);
  }
  return handler(request);
}

}  // namespace pstrain
