#include "common/net/security_flags.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"

DEFINE_string(tls_cert, "",
              "PEM certificate chain. Daemons serve TLS with it (and present it to the "
              "daemons they call); `pstrain` presents it as its client certificate. "
              "Default: plaintext.");
DEFINE_string(tls_key, "", "PEM private key of --tls_cert.");
DEFINE_string(tls_ca, "",
              "PEM CA certificates that peers' certificates must chain to: servers for a "
              "client, client certificates for a server under --tls_client_auth=require.");
DEFINE_string(tls_client_auth, "none",
              "none: no client certificate asked; require: mutual TLS, a client without a "
              "certificate signed by --tls_ca is refused at the handshake.");
DEFINE_string(tls_server_name, "",
              "The name the server certificate must carry when it differs from the host "
              "dialled (default: the host).");
DEFINE_string(client_token_file, "",
              "File holding the bearer token of the client API (JobService): the coordinator "
              "accepts it, `pstrain` and other clients send it. Default: the client API is "
              "open; `pstrain` sends $PSTRAIN_TOKEN when set.");
DEFINE_string(cluster_token_file, "",
              "File holding the bearer token of cluster-internal calls (ClusterService, "
              "ParameterServer); daemons send it on their own calls. Default: open.");

namespace pstrain {
namespace {

absl::StatusOr<std::string> TokenFromFile(const char* flag, const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> token = ReadSecretFile(path);
  if (!token.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", token.status().message()));
  }
  return token;
}

SecurityOptions TlsFromFlags() {
  SecurityOptions options;
  options.tls_cert_file = FLAGS_tls_cert;
  options.tls_key_file = FLAGS_tls_key;
  options.tls_ca_file = FLAGS_tls_ca;
  options.tls_server_name = FLAGS_tls_server_name;
  return options;
}

}  // namespace

absl::StatusOr<SecurityOptions> DaemonSecurityFromFlags() {
  SecurityOptions options = TlsFromFlags();
  if (FLAGS_tls_client_auth == "require") {
    options.tls_require_client_cert = true;
  } else if (FLAGS_tls_client_auth != "none") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_client_auth must be none or require, got '", FLAGS_tls_client_auth, "'"));
  }
  ASSIGN_OR_RETURN(options.client_token,
                   TokenFromFile("client_token_file", FLAGS_client_token_file));
  ASSIGN_OR_RETURN(options.cluster_token,
                   TokenFromFile("cluster_token_file", FLAGS_cluster_token_file));
  // Validates the TLS files now, so a bad flag is a start-up error.
  if (absl::StatusOr<ChannelSecurity> check = MakeChannelSecurity(options, ""); !check.ok()) {
    return check.status();
  }
  return options;
}

absl::StatusOr<ChannelSecurity> ClientChannelSecurityFromFlags() {
  SecurityOptions options = TlsFromFlags();
  options.tls = !FLAGS_tls_ca.empty() || !FLAGS_tls_cert.empty();
  std::string token;
  if (!FLAGS_client_token_file.empty()) {
    ASSIGN_OR_RETURN(token, TokenFromFile("client_token_file", FLAGS_client_token_file));
  } else if (const char* value = std::getenv("PSTRAIN_TOKEN")) {
    token = value;
  }
  return MakeChannelSecurity(options, token);
}

}  // namespace pstrain
