#ifndef PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_WATCH_H_
#define PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/job/retention_policy.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/checkpoint_feed.h"
#include "server/coordinator/stream_source.h"

namespace pstrain {
namespace coordinator {

// WatchCheckpoints: a job's checkpoints newer than the watcher's position,
// each leased to the watcher (`holder`) as it is handed to the stream,
// until the job ends. A checkpoint being deleted (max_to_keep) cannot be
// leased and is skipped. The leases end with the stream, which then calls
// `on_close` (the job applies max_to_keep again).
class CheckpointWatch final : public StreamSource<CheckpointNotification> {
 public:
  CheckpointWatch(std::string job_id, std::string holder, int64_t after_step,
                  std::shared_ptr<CheckpointFeed> feed, std::shared_ptr<RetentionPolicy> retention,
                  std::function<void()> on_close);

  Next Poll(std::function<void()> wake) override;
  void CancelWait(uint64_t wait_id) override;
  void Close() override;

 private:
  const std::string job_id_;
  const std::string holder_;
  const std::shared_ptr<CheckpointFeed> feed_;
  const std::shared_ptr<RetentionPolicy> retention_;
  const std::function<void()> on_close_;
  FeedPosition position_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_WATCH_H_
