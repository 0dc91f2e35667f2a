#include "common/net/http_server.h"

#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/net/host_port.h"
#include "common/net/http_get.h"
#include "common/net/testing/https_get.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<HttpServer> StartServer(HttpServerOptions options = {}) {
  options.address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

int ConnectTo(const std::string& address) {
  const HostPort endpoint = *ParseHostPort(address);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(endpoint.port);
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)), 0);
  return fd;
}

// Sends `raw` over plain TCP and returns everything the server answered
// until it closed.
std::string Exchange(const std::string& address, const std::string& raw) {
  const int fd = ConnectTo(address);
  EXPECT_EQ(::send(fd, raw.data(), raw.size(), 0), static_cast<ssize_t>(raw.size()));
  std::string answer;
  char buffer[4096];
  ssize_t read;
  while ((read = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) answer.append(buffer, read);
  ::close(fd);
  return answer;
}

TEST(HttpServerTest, TheLongestMatchingPrefixAnswers) {
  std::unique_ptr<HttpServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Handle("/", [](const HttpRequest& request) {
    return HttpResponse::Text(200, "root " + request.path);
  });
  server->Handle("/api/", [](const HttpRequest& request) {
    return HttpResponse::Text(200, absl::StrCat("api ", request.path, " after=",
                                                request.query.count("after") ? request.query.at("after") : "-"));
  });
  server->Handle("/exact", [](const HttpRequest&) { return HttpResponse::Text(200, "exact"); });
  EXPECT_EQ(*HttpGet(server->address(), "/api/jobs?after=3", absl::Seconds(5)),
            "api /api/jobs after=3");
  EXPECT_EQ(*HttpGet(server->address(), "/jobs/x%2Fy", absl::Seconds(5)), "root /jobs/x/y");
  EXPECT_EQ(*HttpGet(server->address(), "/exact", absl::Seconds(5)), "exact");
  // "/exact" does not end in '/': it answers only its own path.
  EXPECT_EQ(*HttpGet(server->address(), "/exact/more", absl::Seconds(5)), "root /exact/more");
  EXPECT_EQ(server->scheme(), std::string("http"));
}

TEST(HttpServerTest, NoHandlerIs404AndAMalformedRequest400) {
  std::unique_ptr<HttpServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Handle("/metrics", [](const HttpRequest&) { return HttpResponse::Text(200, "m"); });
  absl::StatusOr<std::string> missing = HttpGet(server->address(), "/other", absl::Seconds(5));
  EXPECT_THAT(missing.status().message(), HasSubstr("404"));
  EXPECT_THAT(Exchange(server->address(), "HELLO\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Exchange(server->address(), "GET /%zz HTTP/1.1\r\n\r\n"),
              HasSubstr("bad percent escape"));
  EXPECT_THAT(Exchange(server->address(),
                       "POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
              StartsWith("HTTP/1.1 411 "));
}

TEST(HttpServerTest, ReadsAContentLengthBodyAndRefusesOneTooLarge) {
  HttpServerOptions options;
  options.max_body_bytes = 16;
  std::unique_ptr<HttpServer> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  server->Handle("/echo", [](const HttpRequest& request) {
    return HttpResponse::Text(200, request.method + ":" + request.body);
  });
  const std::string answer =
      Exchange(server->address(), "POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nPOST:hello"));
  EXPECT_THAT(Exchange(server->address(), "POST /echo HTTP/1.1\r\nContent-Length: 17\r\n\r\n"),
              StartsWith("HTTP/1.1 413 "));
  // HEAD: the GET's headers, no body.
  const std::string head = Exchange(server->address(), "HEAD /echo HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, HasSubstr("Content-Length: 4\r\n"));
  EXPECT_THAT(head, ::testing::EndsWith("\r\n\r\n"));
}

TEST(HttpServerTest, APortInUseIsUnavailableNamingTheAddress) {
  std::unique_ptr<HttpServer> first = StartServer();
  ASSERT_NE(first, nullptr);
  HttpServerOptions options;
  options.address = first->address();
  absl::StatusOr<std::unique_ptr<HttpServer>> second = HttpServer::Start(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(first->address()));
  options.address = "nonsense";
  EXPECT_EQ(HttpServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// A self-signed certificate for 127.0.0.1 and its key, written as PEM
// files under the test's folder.
struct CertificateFiles {
  std::string cert;
  std::string key;
};

CertificateFiles MakeSelfSignedCertificate(const std::string& stem) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX extension_context;
  X509V3_set_ctx_nodb(&extension_context);
  X509V3_set_ctx(&extension_context, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* san =
      X509V3_EXT_conf_nid(nullptr, &extension_context, NID_subject_alt_name, "IP:127.0.0.1");
  X509_add_ext(cert, san, -1);
  X509_EXTENSION_free(san);
  X509_sign(cert, key, EVP_sha256());
  CertificateFiles files{stem + ".crt", stem + ".key"};
  FILE* out = std::fopen(files.cert.c_str(), "w");
  PEM_write_X509(out, cert);
  std::fclose(out);
  out = std::fopen(files.key.c_str(), "w");
  PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(out);
  X509_free(cert);
  EVP_PKEY_free(key);
  return files;
}

TEST(HttpServerTest, ServesHttpsWithTheGivenCertificate) {
  const CertificateFiles files = MakeSelfSignedCertificate(testing::TempDir() + "/server");
  HttpServerOptions options;
  options.tls_cert_file = files.cert;
  options.tls_key_file = files.key;
  std::unique_ptr<HttpServer> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->scheme(), std::string("https"));
  server->Handle("/metrics", [](const HttpRequest&) { return HttpResponse::Text(200, "up 1\n"); });
  absl::StatusOr<HttpsAnswer> answer = HttpsGet(server->address(), "/metrics", files.cert);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "up 1\n");
  // Plain HTTP on the HTTPS port gets no page, and the server serves on.
  EXPECT_FALSE(HttpGet(server->address(), "/metrics", absl::Seconds(5)).ok());
  answer = HttpsGet(server->address(), "/metrics", files.cert);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->body, "up 1\n");
}

TEST(HttpServerTest, UnusableTlsFilesAreInvalidArgumentNamingTheFile) {
  const CertificateFiles one = MakeSelfSignedCertificate(testing::TempDir() + "/one");
  const CertificateFiles other = MakeSelfSignedCertificate(testing::TempDir() + "/other");
  HttpServerOptions options;
  options.address = "127.0.0.1:0";
  options.tls_cert_file = one.cert;
  options.tls_key_file = other.key;
  absl::StatusOr<std::unique_ptr<HttpServer>> mismatched = HttpServer::Start(options);
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.status().message(), HasSubstr(other.key));
  EXPECT_THAT(mismatched.status().message(), HasSubstr("mismatch"));
  options.tls_cert_file = testing::TempDir() + "/absent.crt";
  absl::StatusOr<std::unique_ptr<HttpServer>> absent = HttpServer::Start(options);
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(absent.status().message(), HasSubstr("absent.crt"));
  options.tls_key_file = "";
  EXPECT_EQ(HttpServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
