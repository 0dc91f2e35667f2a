#include "client/job_event_printer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/enum_names.h"
#include "client/job_json.h"
#include "client/job_text.h"

namespace pstrain {

JobEventPrinter::JobEventPrinter(std::ostream& out, OutputOptions options, int64_t max_steps,
                                 std::string headline_metric, absl::Duration plain_interval)
    : out_(out),
      options_(options),
      headline_metric_(std::move(headline_metric)),
      plain_interval_(plain_interval) {
  snapshot_.max_steps = max_steps;
}

void JobEventPrinter::Print(const JobEvent& event, absl::Time now) {
  if (options_.format == OutputFormat::kJson) {
    out_ << JobEventJson(event) << "\n" << std::flush;
    return;
  }
  if (event.has_progress()) {
    snapshot_.global_step = event.progress().global_step();
    snapshot_.loss = event.progress().loss();
    snapshot_.examples_per_sec = event.progress().examples_per_sec();
    rate_.Add(snapshot_.global_step, now);
    snapshot_.eta = rate_.Eta(snapshot_.max_steps);
    PrintProgress(now);
    return;
  }
  // The newest progress goes first, so the log reads in order (and shows
  // the metrics as they were then).
  FlushPendingProgress();
  std::string line;
  if (event.has_checkpoint()) {
    line = absl::StrCat("checkpoint at step ", event.checkpoint().step(), ": ",
                        event.checkpoint().path());
  } else if (event.has_checkpoint_failure()) {
    line = FormatCheckpointFailure(event.checkpoint_failure());
  } else if (event.has_eval()) {
    const auto& metrics = event.eval().metrics();
    std::string metric = headline_metric_;
    if (!metrics.contains(metric) && !metrics.empty()) {
      metric = std::min_element(metrics.begin(), metrics.end(), [](const auto& a, const auto& b) {
                 return a.first < b.first;
               })->first;
    }
    if (metrics.contains(metric)) {
      snapshot_.eval_metric = metric;
      snapshot_.eval_value = metrics.at(metric);
    }
    line = event.eval().skipped_reason().empty()
               ? absl::StrCat("eval at step ", event.eval().checkpoint_step(), ": ",
                              FormatMetrics(metrics), event.eval().is_best() ? "  (best)" : "")
               : absl::StrCat("eval at step ", event.eval().checkpoint_step(), ": skipped, ",
                              event.eval().skipped_reason());
  } else if (event.has_status()) {
    const JobStatus& status = event.status();
    // A lost parameter server brings no state change, only a rollback:
    // said once per rollback, with what was lost and where it went back to.
    // Likewise a shard's backup taking over, and a lost replica rebuilt as
    // a backup (hot-standby replicas).
    SayOnce(status, "rolled back", status.rollbacks(), status.last_rollback(), &rollbacks_shown_);
    SayOnce(status, "failed over", status.failovers(), status.last_failover(), &failovers_shown_);
    SayOnce(status, "rebuilt a backup", status.backups_rebuilt(), status.last_backup_rebuilt(),
            &rebuilds_shown_);
    line = absl::StrCat("job ", status.job_id(), ": ", JobStateName(status.state()),
                        status.reason().empty() ? "" : absl::StrCat(" (", status.reason(), ")"));
    if (line == last_status_line_) return;
    last_status_line_ = line;
  } else {
    return;  // an event kind newer than this client
  }
  PrintLine(line);
}

void JobEventPrinter::PrintLine(const std::string& line) {
  if (options_.format == OutputFormat::kJson) return;
  FlushPendingProgress();
  ClearBar();
  out_ << line << "\n";
  if (bar_shown_) out_ << FormatProgressBar(snapshot_);
  out_ << std::flush;
}

void JobEventPrinter::FlushPendingProgress() {
  if (progress_pending_) out_ << FormatProgressLine(snapshot_) << "\n";
  progress_pending_ = false;
}

void JobEventPrinter::Finish() {
  FlushPendingProgress();
  if (bar_shown_) out_ << "\n";
  bar_shown_ = false;
  out_ << std::flush;
}

void JobEventPrinter::PrintProgress(absl::Time now) {
  switch (options_.progress) {
    case ProgressStyle::kLiveBar:
      ClearBar();
      out_ << FormatProgressBar(snapshot_) << std::flush;
      bar_shown_ = true;
      break;
    case ProgressStyle::kPlainLines: {
      // The step that reaches the limit is always shown: it is the line a
      // person (or a test) looks for to see that training completed.
      const bool reached_limit = snapshot_.max_steps > 0 &&
                                 snapshot_.global_step >= snapshot_.max_steps &&
                                 !limit_line_printed_;
      limit_line_printed_ = limit_line_printed_ || reached_limit;
      if (reached_limit || now - last_plain_line_ >= plain_interval_) {
        out_ << FormatProgressLine(snapshot_) << "\n" << std::flush;
        last_plain_line_ = now;
        progress_pending_ = false;
      } else {
        progress_pending_ = true;
      }
      break;
    }
    case ProgressStyle::kNone:
      break;
  }
}

void JobEventPrinter::SayOnce(const JobStatus& status, absl::string_view what, int32_t count,
                              absl::string_view last, int32_t* shown) {
  if (count <= *shown) return;
  *shown = count;
  PrintLine(absl::StrCat("job ", status.job_id(), " ", what, " (", count,
                         count == 1 ? " time" : " times", "): ", last));
}

void JobEventPrinter::ClearBar() {
  // Carriage return, then erase to the end of the line (ANSI EL): a shorter
  // line leaves nothing of the longer one behind.
  if (bar_shown_) out_ << "\r\033[K";
}

}  // namespace pstrain
