#include "client/progress_line.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pstrain {
namespace {

constexpr int kBarWidth = 20;

std::string StepText(const ProgressSnapshot& progress) {
  return progress.max_steps > 0 ? absl::StrCat(progress.global_step, "/", progress.max_steps)
                                : absl::StrCat(progress.global_step);
}

// "  accuracy 0.8123  ETA 42s", the parts both forms end with.
std::string Tail(const ProgressSnapshot& progress) {
  std::string text;
  if (!progress.eval_metric.empty()) {
    absl::StrAppendFormat(&text, "  %s %.4f", progress.eval_metric, progress.eval_value);
  }
  if (progress.eta.has_value()) absl::StrAppend(&text, "  ETA ", FormatEta(*progress.eta));
  return text;
}

}  // namespace

std::string FormatEta(absl::Duration eta) {
  const int64_t seconds = std::max<int64_t>(0, absl::ToInt64Seconds(eta));
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) return absl::StrFormat("%dm%02ds", seconds / 60, seconds % 60);
  return absl::StrFormat("%dh%02dm", seconds / 3600, (seconds % 3600) / 60);
}

std::string FormatProgressBar(const ProgressSnapshot& progress) {
  std::string text;
  if (progress.max_steps > 0) {
    const double done =
        std::clamp(static_cast<double>(progress.global_step) / progress.max_steps, 0.0, 1.0);
    const int filled = static_cast<int>(done * kBarWidth);
    absl::StrAppendFormat(&text, "[%s%s] %3d%%  ", std::string(filled, '#'),
                          std::string(kBarWidth - filled, '-'), static_cast<int>(done * 100));
  }
  absl::StrAppendFormat(&text, "step %s  %.0f ex/s  loss %.4f", StepText(progress),
                        progress.examples_per_sec, progress.loss);
  return text + Tail(progress);
}

std::string FormatProgressLine(const ProgressSnapshot& progress) {
  return absl::StrFormat("step %-12s loss %.4f  %8.0f examples/s", StepText(progress),
                         progress.loss, progress.examples_per_sec) +
         Tail(progress);
}

void StepRateEstimator::Add(int64_t step, absl::Time time) {
  if (newest_.has_value() && step < newest_->step) {
    // The job went back (restored a checkpoint): start over.
    oldest_.reset();
  }
  newest_ = Sample{step, time};
  if (!oldest_.has_value()) oldest_ = newest_;
  // Slide: past the window, keep the newer half of the span, its start
  // interpolated as if the rate were steady within it.
  if (newest_->time - oldest_->time > kWindow) {
    const double keep = 0.5;
    oldest_ = Sample{oldest_->step + static_cast<int64_t>((newest_->step - oldest_->step) * keep),
                     oldest_->time + (newest_->time - oldest_->time) * keep};
  }
}

std::optional<absl::Duration> StepRateEstimator::Eta(int64_t max_steps) const {
  if (max_steps <= 0 || !oldest_.has_value() || !newest_.has_value()) return std::nullopt;
  const int64_t steps = newest_->step - oldest_->step;
  const absl::Duration elapsed = newest_->time - oldest_->time;
  if (steps <= 0 || elapsed < absl::Milliseconds(100)) return std::nullopt;
  const int64_t left = std::max<int64_t>(0, max_steps - newest_->step);
  return elapsed * (static_cast<double>(left) / steps);
}

}  // namespace pstrain
