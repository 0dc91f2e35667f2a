#include "common/net/channel_security.h"

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/net/keepalive.h"
#include "common/status/status_macros.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"

namespace pstrain {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (contents.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, " is empty"));
  }
  return contents.str();
}

absl::Status CheckPair(const SecurityOptions& options) {
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "a TLS certificate needs its key and a key its certificate (--tls_cert with --tls_key)");
  }
  return absl::OkStatus();
}

// Adds the bearer token to the initial metadata of every call.
class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class TokenInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(const std::string& token) : header_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new TokenInterceptor(&header_);
  }

 private:
  // Constant after construction; outlives the channel's calls, since the
  // channel owns the factory.
  const std::string header_;
};

}  // namespace

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string contents, ReadFile(path, "token file"));
  std::string token(absl::StripAsciiWhitespace(contents));
  if (token.empty())
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  return token;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const SecurityOptions& options) {
  RETURN_IF_ERROR(CheckPair(options));
  if (options.tls_cert_file.empty()) {
    if (options.tls_require_client_cert) {
      return absl::InvalidArgumentError("--tls_client_auth=require needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadFile(options.tls_cert_file, "TLS certificate"));
  ASSIGN_OR_RETURN(pair.private_key, ReadFile(options.tls_key_file, "TLS key"));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!options.tls_ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile(options.tls_ca_file, "TLS CA file"));
  }
  if (options.tls_require_client_cert) {
    if (options.tls_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_auth=require needs --tls_ca to verify client certificates");
    }
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  } else {
    ssl.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<ChannelSecurity> MakeChannelSecurity(const SecurityOptions& options,
                                                    const std::string& token) {
  RETURN_IF_ERROR(CheckPair(options));
  ChannelSecurity security;
  security.token = token;
  if (!options.tls_enabled()) return security;
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile(options.tls_ca_file, "TLS CA file"));
  }
  if (!options.tls_cert_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadFile(options.tls_cert_file, "TLS certificate"));
    ASSIGN_OR_RETURN(ssl.pem_private_key, ReadFile(options.tls_key_file, "TLS key"));
  }
  security.credentials = grpc::SslCredentials(ssl);
  security.server_name = options.tls_server_name;
  return security;
}

std::shared_ptr<grpc::Channel> CreateSecureChannel(const std::string& address,
                                                   const ChannelSecurity& security,
                                                   grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      security.credentials != nullptr ? security.credentials : grpc::InsecureChannelCredentials();
  if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
  args.SetMaxReceiveMessageSize(security.max_message_bytes);
  args.SetMaxSendMessageSize(security.max_message_bytes);
  SetClientKeepalive(args);
  if (security.token.empty()) return grpc::CreateCustomChannel(address, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<TokenInterceptorFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

}  // namespace pstrain
