#include "common/net/server_tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// The newest error on this thread's OpenSSL error queue, which it empties.
std::string TakeOpenSslError() {
  std::string message;
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    message = text;
  }
  return message.empty() ? "unknown TLS error" : message;
}

}  // namespace

TlsSession::~TlsSession() {
  // A close_notify lets the browser tell a complete answer from a cut one;
  // the peer's reply is not awaited.
  SSL_shutdown(ssl_);
  SSL_free(ssl_);
  // A session whose handshake failed cannot shut down; that error is no
  // news to anyone.
  ERR_clear_error();
}

absl::StatusOr<size_t> TlsSession::Read(char* data, size_t size) {
  const int read = SSL_read(ssl_, data, static_cast<int>(size));
  if (read > 0) return static_cast<size_t>(read);
  const int error = SSL_get_error(ssl_, read);
  if (error == SSL_ERROR_ZERO_RETURN) return 0;
  ERR_clear_error();
  return absl::UnavailableError(absl::StrCat("TLS read failed (SSL error ", error, ")"));
}

absl::Status TlsSession::Write(absl::string_view data) {
  while (!data.empty()) {
    const int written = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
    if (written <= 0) {
      const int error = SSL_get_error(ssl_, written);
      ERR_clear_error();
      return absl::UnavailableError(absl::StrCat("TLS write failed (SSL error ", error, ")"));
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ServerTls>> ServerTls::Create(const std::string& cert_file,
                                                             const std::string& key_file) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) return absl::InternalError(TakeOpenSslError());
  std::unique_ptr<ServerTls> tls(new ServerTls(context));
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(context, cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS certificate ", cert_file, ": ", TakeOpenSslError()));
  }
  if (SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS key ", key_file, ": ", TakeOpenSslError()));
  }
  if (SSL_CTX_check_private_key(context) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", key_file,
                                                   " does not match the certificate ",
                                                   cert_file, ": ", TakeOpenSslError()));
  }
  return tls;
}

ServerTls::~ServerTls() { SSL_CTX_free(context_); }

absl::StatusOr<std::unique_ptr<TlsSession>> ServerTls::Accept(int fd) const {
  SSL* ssl = SSL_new(context_);
  if (ssl == nullptr) return absl::InternalError(TakeOpenSslError());
  std::unique_ptr<TlsSession> session(new TlsSession(ssl));
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) != 1) {
    return absl::UnavailableError(absl::StrCat("TLS handshake failed: ", TakeOpenSslError()));
  }
  return session;
}

}  // namespace pstrain
