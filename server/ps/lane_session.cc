#include "server/ps/lane_session.h"

#include <utility>

#include "glog/logging.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<LaneSession>> LaneSession::Start(UniqueFd socket, ShardStore& store,
                                                                LaneRegistry* lanes,
                                                                PushPullSessionOptions options,
                                                                int64_t max_request_bytes,
                                                                std::function<void()> ended) {
  std::unique_ptr<LaneSession> session(new LaneSession(store, lanes, options, std::move(ended)));
  LaneSession* s = session.get();
  FrameHandlers handlers;
  handlers.on_frame = [s](std::string frame) { s->OnFrame(std::move(frame)); };
  handlers.on_closed = [s](const absl::Status& why) { s->OnClosed(why); };
  // The connection reads from the start, which stands for the session's
  // first ReadNext.
  absl::StatusOr<std::unique_ptr<FrameConnection>> connection =
      FrameConnection::Start(std::move(socket), max_request_bytes, std::move(handlers));
  if (!connection.ok()) return connection.status();
  session->connection_ = *std::move(connection);
  session->connected_.Notify();
  return session;
}

LaneSession::LaneSession(ShardStore& store, LaneRegistry* lanes, PushPullSessionOptions options,
                         std::function<void()> ended)
    : store_(store), ended_(std::move(ended)), session_(store, lanes, options, *this) {}

LaneSession::~LaneSession() {
  if (connection_ == nullptr) return;  // Start failed: nothing was served
  connection_->Close();
  session_ended_.WaitForNotification();
}

void LaneSession::OnFrame(std::string frame) {
  // One request at a time, like the gRPC stream: the session asks for the
  // next (ReadNext) once this one is handled, or later when too many
  // answers wait to be sent.
  connected_.WaitForNotification();
  connection_->SetReading(false);
  store_.metrics().RecordLaneRequest();
  const bool parsed = request_.ParseFromString(frame);
  session_.OnRequest(request_,
                     parsed ? absl::OkStatus()
                            : absl::InvalidArgumentError("the bytes are not a PushPullRequest"));
}

void LaneSession::OnClosed(const absl::Status& why) {
  connected_.WaitForNotification();
  if (!absl::IsCancelled(why) && !absl::IsUnavailable(why)) {
    LOG(WARNING) << "a shared-memory lane's connection ended: " << why;
  }
  session_.Cancel();
  session_.OnReadsDone();
}

void LaneSession::ReadNext() { connection_->SetReading(true); }

SessionWire::Written LaneSession::Write(const PushPullResponse& answer, PulledSlices /*slices*/) {
  return connection_->Send(answer.SerializeAsString()).ok() ? Written::kDone : Written::kFailed;
}

void LaneSession::End() {
  // Once notified, this session may be destroyed (on another thread):
  // nothing here touches it after.
  std::function<void()> ended = ended_;
  session_ended_.Notify();
  ended();
}

}  // namespace pstrain
