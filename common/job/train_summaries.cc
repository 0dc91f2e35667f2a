#include "common/job/train_summaries.h"

#include <utility>

#include "glog/logging.h"

namespace pstrain {

TrainSummaries::TrainSummaries(std::unique_ptr<SummaryWriter> writer, LearningRate learning_rate,
                               int64_t every_steps, Clock& clock)
    : learning_rate_(std::move(learning_rate)),
      every_steps_(every_steps < 1 ? 1 : every_steps),
      clock_(clock),
      writer_(std::move(writer)) {}

TrainSummaries::~TrainSummaries() {
  absl::MutexLock lock(&mu_);
  if (writer_ != nullptr) {
    absl::Status closed = writer_->Close();
    if (!closed.ok()) LOG(WARNING) << "train summaries: " << closed;
  }
}

void TrainSummaries::OnProgress(int64_t step, double loss, double examples_per_sec) {
  absl::MutexLock lock(&mu_);
  if (writer_ == nullptr) return;
  loss_ = loss;
  examples_per_sec_ = examples_per_sec;
  // Reports arrive from several workers, so steps are not multiples of
  // every_steps and may arrive out of order: write on the first step past
  // each boundary, once.
  if (written_step_.has_value() && step / every_steps_ <= *written_step_ / every_steps_) return;
  WriteLocked(step, Write::kProgress);
}

absl::Status TrainSummaries::Close(int64_t step) {
  absl::MutexLock lock(&mu_);
  if (writer_ == nullptr) return absl::OkStatus();
  if (loss_.has_value() && (!written_step_.has_value() || *written_step_ < step)) {
    WriteLocked(step, Write::kClosing);
  } else if (written_step_.has_value() && !rate_written_) {
    // A job shorter than kMinRateSpan between writes: its one rate, over
    // the whole of its training.
    if (std::optional<double> rate = RateLocked(*written_step_, clock_.Now(), Write::kClosing)) {
      writer_->WriteScalar(*written_step_, "global_step_per_sec", *rate).IgnoreError();
    }
  }
  absl::Status closed = writer_->Close();
  writer_.reset();
  return closed;
}

std::optional<double> TrainSummaries::RateLocked(int64_t step, absl::Time now, Write write) {
  std::optional<std::pair<int64_t, absl::Time>> since;
  if (!recent_writes_.empty() && now - recent_writes_.front().second >= kMinRateSpan) {
    since = recent_writes_.front();
  } else if (write == Write::kClosing && !rate_written_ && first_write_.has_value()) {
    since = first_write_;
  }
  if (!since.has_value() || now <= since->second || step <= since->first) return std::nullopt;
  rate_written_ = true;
  return static_cast<double>(step - since->first) / absl::ToDoubleSeconds(now - since->second);
}

void TrainSummaries::WriteLocked(int64_t step, Write write) {
  const absl::Time now = clock_.Now();
  absl::Status status;
  if (loss_.has_value()) status.Update(writer_->WriteScalar(step, "loss", *loss_));
  status.Update(writer_->WriteScalar(step, "learning_rate", learning_rate_.At(step)));
  status.Update(writer_->WriteScalar(step, "examples_per_sec", examples_per_sec_));
  if (std::optional<double> rate = RateLocked(step, now, write)) {
    status.Update(writer_->WriteScalar(step, "global_step_per_sec", *rate));
  }
  if (!first_write_.has_value()) first_write_.emplace(step, now);
  written_step_ = step;
  recent_writes_.emplace_back(step, now);
  if (recent_writes_.size() > kRateWindow) recent_writes_.pop_front();
  if (!status.ok() && !error_logged_) {
    error_logged_ = true;
    LOG(WARNING) << "cannot write the training summaries (training goes on): " << status;
  }
}

}  // namespace pstrain
