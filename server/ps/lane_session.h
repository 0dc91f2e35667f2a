#ifndef PSTRAIN_SERVER_PS_LANE_SESSION_H_
#define PSTRAIN_SERVER_PS_LANE_SESSION_H_

// A worker's PushPull requests served over its shared-memory lane's own
// connection: the lane's doorbell. Each request and answer is one frame
// (a serialised PushPullRequest / PushPullResponse, with its tensor bytes
// in the lane's segment), so an exchange costs a system call on each side
// and a thread wake-up on each side, where gRPC's stream costs several of
// each. What the messages mean is the same as on the gRPC stream: the same
// PushPullSession handles them.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "common/net/frame_connection.h"
#include "common/net/unique_fd.h"
#include "server/ps/lane_registry.h"
#include "server/ps/push_pull_session.h"
#include "server/ps/shard_store.h"

namespace pstrain {

class LaneSession final : public LaneServer::Connection, private SessionWire {
 public:
  // Serves the requests arriving on `socket` until the worker closes it or
  // this is destroyed; calls `ended` once when it has ended. Requests
  // longer than `max_request_bytes` end it. `store` and `lanes` are
  // borrowed and must outlive the session.
  static absl::StatusOr<std::unique_ptr<LaneSession>> Start(UniqueFd socket, ShardStore& store,
                                                            LaneRegistry* lanes,
                                                            PushPullSessionOptions options,
                                                            int64_t max_request_bytes,
                                                            std::function<void()> ended);

  // Closes the connection, and waits until every request is answered or
  // cancelled (pulls waiting for a version stop waiting).
  ~LaneSession() override;

  LaneSession(const LaneSession&) = delete;
  LaneSession& operator=(const LaneSession&) = delete;

 private:
  LaneSession(ShardStore& store, LaneRegistry* lanes, PushPullSessionOptions options,
              std::function<void()> ended);

  void OnFrame(std::string frame);
  void OnClosed(const absl::Status& why);

  // SessionWire.
  void ReadNext() override;
  Written Write(const PushPullResponse& answer, PulledSlices slices) override;
  bool TakesSlices() const override { return false; }
  void End() override;

  ShardStore& store_;
  const std::function<void()> ended_;
  absl::Notification session_ended_;
  // Used on the connection's thread only.
  PushPullRequest request_;
  PushPullSession session_;
  // Set once by Start, which then notifies `connected_`: the connection's
  // thread may hand over a frame before Start has set it, and waits.
  std::unique_ptr<FrameConnection> connection_;
  absl::Notification connected_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_LANE_SESSION_H_
