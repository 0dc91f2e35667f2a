#ifndef PSTRAIN_COMMON_NET_KEEPALIVE_H_
#define PSTRAIN_COMMON_NET_KEEPALIVE_H_

// How pstrain's gRPC connections notice a peer that went silent and get
// back to it: on loopback a dead peer's connection is refused at once, but
// across hosts a link that goes down (a cable, a switch, a partition)
// leaves the connection open and silent, and a call's deadline does not
// close it. Without keepalive pings such a connection is retried at TCP's
// backoff (up to two minutes a packet) long after the link is back; with
// them it is closed within kKeepaliveTime + kKeepaliveTimeout of silence
// and dialled again, no more than kMaxReconnectBackoff apart.

#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace pstrain {

// A ping after this long without one, whether or not calls are active.
inline constexpr absl::Duration kKeepaliveTime = absl::Seconds(10);
// A ping unanswered this long closes the connection. Long enough for a
// peer whose cores are busy (two cores, a test's many processes) to answer.
inline constexpr absl::Duration kKeepaliveTimeout = absl::Seconds(10);
// The longest wait between two attempts to dial a peer again (gRPC's
// default, 120 s, would leave a healed link unused for minutes).
inline constexpr absl::Duration kMaxReconnectBackoff = absl::Seconds(5);

// Sets the client's keepalive and reconnect arguments on `args`.
void SetClientKeepalive(grpc::ChannelArguments& args);

// Lets `builder`'s server accept its clients' pings at that pace (by
// default gRPC servers close a connection that pings more often than
// every five minutes without data).
void AcceptClientKeepalive(grpc::ServerBuilder& builder);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_KEEPALIVE_H_
