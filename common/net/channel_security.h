#ifndef PSTRAIN_COMMON_NET_CHANNEL_SECURITY_H_
#define PSTRAIN_COMMON_NET_CHANNEL_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace pstrain {

// The largest gRPC message any pstrain process sends or receives unless
// --max_message_mb says otherwise. Tensors travel in chunks of 1 MiB (a
// sparse push carries up to 2.5 times as many bytes of ids besides), so
// 16 MiB leaves four times the room the largest legitimate message needs;
// anything larger is a mistake or an attack on the receiver's memory.
inline constexpr int kDefaultMaxMessageBytes = 16 << 20;

// TLS and bearer tokens of one process, as the flags give them
// (security_flags.cc). The default is plaintext with no tokens: what every
// deployment that terminates TLS in a mesh, and every test, runs.
struct SecurityOptions {
  // PEM certificate chain and private key. A server serves TLS when both are
  // set; a client presents them as its client certificate. Default empty:
  // plaintext.
  std::string tls_cert_file;
  std::string tls_key_file;
  // PEM root certificates. A client verifies servers against them (empty:
  // the system roots); a server verifies client certificates against them.
  std::string tls_ca_file;
  // Server: refuse connections without a client certificate signed by
  // tls_ca_file (mutual TLS). Default false: no client certificate asked.
  bool tls_require_client_cert = false;
  // Client: connect with TLS even without a client certificate (the
  // `pstrain` CLI with only --tls_ca). Daemons use TLS when tls_cert_file is
  // set. Default false.
  bool tls = false;
  // Client: the name the server certificate must carry, when it differs from
  // the host dialled (tests on 127.0.0.1). Default empty: the host.
  std::string tls_server_name;
  // Bearer tokens (the values, read from files). Empty: that kind of call is
  // not checked. client_token guards JobService; cluster_token guards
  // ClusterService and ParameterServer and is what daemons send.
  std::string client_token;
  std::string cluster_token;

  bool tls_enabled() const { return tls || !tls_cert_file.empty(); }
};

// What a client needs to dial: credentials with the files already read, the
// token to send, the server-name override, and the message size limit.
// Copyable; the default dials plaintext without a token.
struct ChannelSecurity {
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // null: plaintext
  std::string token;                                      // empty: none sent
  std::string server_name;                                // empty: the host
  // Largest message sent or received on the channel (--max_message_mb):
  // bounded both ways, so neither a peer nor a bug of our own can make a
  // process buffer an unbounded message. Default kDefaultMaxMessageBytes.
  int max_message_bytes = kDefaultMaxMessageBytes;
};

// Server credentials for `options`: TLS when tls_cert_file is set, else
// plaintext. InvalidArgument: only one of cert and key, a file cannot be
// read, or client certificates required without a CA.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const SecurityOptions& options);

// A client's security for `options`, sending `token` on every call.
// InvalidArgument: a file cannot be read, or only one of cert and key.
absl::StatusOr<ChannelSecurity> MakeChannelSecurity(const SecurityOptions& options,
                                                    const std::string& token);

// A channel to `address` with `security`'s credentials and message size
// limit; every call carries `authorization: Bearer <token>` when a token is
// set, with TLS or without.
std::shared_ptr<grpc::Channel> CreateSecureChannel(const std::string& address,
                                                   const ChannelSecurity& security,
                                                   grpc::ChannelArguments args = {});

// The contents of a file holding a secret, surrounding whitespace removed.
// InvalidArgument names the file (never its contents) when it cannot be
// read or is empty.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_CHANNEL_SECURITY_H_
