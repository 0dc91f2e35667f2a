#include "common/net/testing/https_get.h"

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/net/host_port.h"
#include "common/net/unique_fd.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<HttpsAnswer> HttpsGet(const std::string& address, const std::string& target,
                                     const std::string& ca_file,
                                     const std::vector<std::string>& headers) {
  ASSIGN_OR_RETURN(const HostPort endpoint, ParseHostPort(address));
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(endpoint.port);
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&peer), sizeof(peer)) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", address));
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                            SSL_CTX_free);
  SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), SSL_free);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), "127.0.0.1");
  SSL_set_fd(ssl.get(), fd.get());
  if (SSL_connect(ssl.get()) != 1) {
    char error[256];
    ERR_error_string_n(ERR_get_error(), error, sizeof(error));
    ERR_clear_error();
    return absl::UnavailableError(absl::StrCat("TLS handshake with ", address, ": ", error));
  }
  std::string request = absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", address, "\r\n");
  for (const std::string& header : headers) absl::StrAppend(&request, header, "\r\n");
  request += "\r\n";
  SSL_write(ssl.get(), request.data(), static_cast<int>(request.size()));
  std::string received;
  char buffer[8192];
  int read;
  while ((read = SSL_read(ssl.get(), buffer, sizeof(buffer))) > 0) received.append(buffer, read);
  ERR_clear_error();
  const size_t head_end = received.find("\r\n\r\n");
  HttpsAnswer answer;
  if (head_end == std::string::npos || received.size() < 12 ||
      !absl::SimpleAtoi(received.substr(9, 3), &answer.status)) {
    return absl::InternalError(
        absl::StrCat("not an HTTP answer from ", address, ": '", received.substr(0, 200), "'"));
  }
  answer.head = received.substr(0, head_end);
  answer.body = received.substr(head_end + 4);
  return answer;
}

}  // namespace pstrain
