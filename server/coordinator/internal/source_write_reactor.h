#ifndef PSTRAIN_SERVER_COORDINATOR_INTERNAL_SOURCE_WRITE_REACTOR_H_
#define PSTRAIN_SERVER_COORDINATOR_INTERNAL_SOURCE_WRITE_REACTOR_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/status/grpc_status.h"
#include "grpcpp/grpcpp.h"
#include "server/coordinator/stream_source.h"

namespace pstrain {
namespace coordinator {
namespace internal {

// A server-streaming reactor that sends what a StreamSource yields, one
// write at a time, and waits for the source's wake when nothing is ready,
// so no thread blocks while a stream is idle. It finishes with the source's
// end status, or CANCELLED when the client went away or a write failed.
// Deletes itself in OnDone.
//
// It finishes only when no write, poll or registered wake is outstanding,
// so no callback can reach it after OnDone. No lock is held while calling
// into gRPC or the source.
template <typename Message>
class SourceWriteReactor : public grpc::ServerWriteReactor<Message> {
 public:
  explicit SourceWriteReactor(std::shared_ptr<StreamSource<Message>> source)
      : source_(std::move(source)) {
    Pump();
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) broken_ = true;
    }
    Pump();
  }

  void OnCancel() override {
    {
      absl::MutexLock lock(&mu_);
      broken_ = true;
    }
    Pump();
  }

  void OnDone() override { delete this; }

 private:
  void Wake() {
    {
      absl::MutexLock lock(&mu_);
      ++wakes_fired_;
    }
    Pump();
  }

  // Moves the stream on by whatever is possible now. Safe from any thread;
  // whoever starts a write, poll or finish owns it until it completes.
  void Pump() {
    for (;;) {
      enum class Action { kWrite, kPoll, kCancelWait, kFinish } action;
      grpc::Status status;
      uint64_t wait_id = 0;
      {
        absl::MutexLock lock(&mu_);
        if (finished_) return;
        // The poller decides again once its poll returns.
        if (polling_) return;
        if (writing_) return;
        const bool waiting = wakes_registered_ > wakes_fired_;
        if (!broken_ && !queue_.empty()) {
          current_ = std::move(queue_.front());
          queue_.pop_front();
          writing_ = true;
          action = Action::kWrite;
        } else if (broken_ || end_.has_value()) {
          if (waiting) {
            action = Action::kCancelWait;
            wait_id = wait_id_;
          } else {
            finished_ = true;
            status = broken_ ? grpc::Status(grpc::StatusCode::CANCELLED, "the stream was cancelled")
                             : ToGrpcStatus(*end_);
            action = Action::kFinish;
          }
        } else if (waiting) {
          return;
        } else {
          polling_ = true;
          action = Action::kPoll;
        }
      }
      switch (action) {
        case Action::kWrite:
          this->StartWrite(&current_);
          return;
        case Action::kFinish:
          source_->Close();
          this->Finish(status);
          return;
        case Action::kCancelWait: {
          // The wake runs Pump again, which then finishes. `source` keeps the
          // source alive should that delete this reactor first.
          std::shared_ptr<StreamSource<Message>> source = source_;
          source->CancelWait(wait_id);
          return;
        }
        case Action::kPoll: {
          typename StreamSource<Message>::Next next = source_->Poll([this] { Wake(); });
          absl::MutexLock lock(&mu_);
          polling_ = false;
          for (Message& m : next.messages) queue_.push_back(std::move(m));
          if (next.end.has_value()) end_ = std::move(next.end);
          if (next.wait_id != 0) {
            ++wakes_registered_;
            wait_id_ = next.wait_id;
          }
          break;  // and decide again
        }
      }
    }
  }

  // Constant after construction.
  const std::shared_ptr<StreamSource<Message>> source_;

  // Owned by the writer while writing_.
  Message current_;

  absl::Mutex mu_;
  std::deque<Message> queue_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool polling_ ABSL_GUARDED_BY(mu_) = false;
  // A write failed or the call was cancelled: stop sending.
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Wakes registered by polls and wakes received; a wake is outstanding
  // while the first exceeds the second (a wake may arrive before its poll
  // returns, so these are counts rather than a flag).
  uint64_t wakes_registered_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t wakes_fired_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t wait_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_INTERNAL_SOURCE_WRITE_REACTOR_H_
