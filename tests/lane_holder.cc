// A stand-in for a worker in tests/shared_memory_lane_test: opens a
// shared-memory lane to the shard at argv[1], says "open" on stdout, then
// holds it until it is killed.
//
//   lane_holder HOST:PORT

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "worker/internal/shard_lane.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lane_holder HOST:PORT\n");
    return 2;
  }
  absl::Notification opened;
  absl::StatusOr<std::shared_ptr<pstrain::worker::internal::ShardLane>> lane;
  // Kept for the lane's life, as a worker's streams keep their channels.
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  pstrain::worker::internal::ShardLane::OpenAsync(
      channel, 1 << 20,
      [&](absl::StatusOr<std::shared_ptr<pstrain::worker::internal::ShardLane>> l) {
        lane = std::move(l);
        opened.Notify();
      });
  if (!opened.WaitForNotificationWithTimeout(absl::Seconds(30)) || !lane.ok()) {
    std::fprintf(stderr, "lane_holder: no lane to %s: %s\n", argv[1],
                 lane.ok() ? "timed out" : lane.status().ToString().c_str());
    return 1;
  }
  std::printf("open\n");
  std::fflush(stdout);
  for (;;) pause();
}
