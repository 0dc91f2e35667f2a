#ifndef PSTRAIN_COMMON_NET_SERVER_TLS_H_
#define PSTRAIN_COMMON_NET_SERVER_TLS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// OpenSSL's types, kept out of every includer.
typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace pstrain {

// One TLS connection accepted by ServerTls: reads and writes on its socket
// (borrowed) through OpenSSL. Not thread-safe: one thread at a time.
class TlsSession {
 public:
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Up to `size` bytes; 0 when the peer closed the connection.
  // Unavailable: the connection broke or timed out (the socket's timeouts).
  absl::StatusOr<size_t> Read(char* data, size_t size);
  // All of `data`. Unavailable as Read.
  absl::Status Write(absl::string_view data);

 private:
  friend class ServerTls;
  explicit TlsSession(SSL* ssl) : ssl_(ssl) {}

  SSL* const ssl_;
};

// The server side of TLS for plain sockets (HttpServer's HTTPS): a
// certificate chain and its private key, read once, from the same PEM files
// the gRPC server uses (--tls_cert, --tls_key). TLS 1.2 and newer; no client
// certificate is asked for. Thread-safe: sessions may be accepted from many
// threads at once.
class ServerTls {
 public:
  // InvalidArgument: a file cannot be read, holds no PEM certificate or key,
  // or the key does not match the certificate (the message names the file).
  static absl::StatusOr<std::unique_ptr<ServerTls>> Create(const std::string& cert_file,
                                                           const std::string& key_file);
  ~ServerTls();
  ServerTls(const ServerTls&) = delete;
  ServerTls& operator=(const ServerTls&) = delete;

  // The handshake on the connected socket `fd` (borrowed; it must outlive
  // the session). Unavailable: the peer did not complete the handshake
  // (plain HTTP on an HTTPS port, a timeout, a refused certificate).
  absl::StatusOr<std::unique_ptr<TlsSession>> Accept(int fd) const;

 private:
  explicit ServerTls(SSL_CTX* context) : context_(context) {}

  SSL_CTX* const context_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_SERVER_TLS_H_
