#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_SOURCE_READER_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_SOURCE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/coordinator/stream_source.h"

namespace pstrain {
namespace coordinator {

// Reads a stream source the way a reactor does, waiting (in real time, up to
// `timeout` for each message) for its wake when nothing is ready. For one
// thread.
template <typename Message>
class SourceReader {
 public:
  explicit SourceReader(std::shared_ptr<StreamSource<Message>> source,
                        absl::Duration timeout = absl::Seconds(30))
      : source_(std::move(source)), timeout_(timeout) {}
  ~SourceReader() {
    if (wait_id_ != 0) source_->CancelWait(wait_id_);
    source_->Close();
  }

  SourceReader(const SourceReader&) = delete;
  SourceReader& operator=(const SourceReader&) = delete;

  // The next message, or nothing once the stream ended or time ran out.
  std::optional<Message> Next() {
    const absl::Time give_up = absl::Now() + timeout_;
    while (ready_.empty() && !ended_) {
      if (wait_id_ != 0) {
        if (!woken_->WaitForNotificationWithTimeout(give_up - absl::Now())) return std::nullopt;
        wait_id_ = 0;
      }
      auto woken = std::make_shared<absl::Notification>();
      typename StreamSource<Message>::Next next = source_->Poll([woken] { woken->Notify(); });
      for (Message& m : next.messages) ready_.push_back(std::move(m));
      if (next.end.has_value()) ended_ = true;
      wait_id_ = next.wait_id;
      woken_ = woken;
    }
    if (ready_.empty()) return std::nullopt;
    Message m = std::move(ready_.front());
    ready_.erase(ready_.begin());
    return m;
  }

 private:
  const std::shared_ptr<StreamSource<Message>> source_;
  const absl::Duration timeout_;
  std::vector<Message> ready_;
  bool ended_ = false;
  uint64_t wait_id_ = 0;
  std::shared_ptr<absl::Notification> woken_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_SOURCE_READER_H_
