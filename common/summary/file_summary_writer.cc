#include "common/summary/file_summary_writer.h"

#include <glog/logging.h>

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"
#include "common/summary/scalar_jsonl.h"
#include "common/summary/scalar_record.h"

namespace pstrain {
namespace {

absl::Status CheckTag(absl::string_view tag) {
  if (tag.empty()) return absl::InvalidArgumentError("empty summary tag");
  for (const char c : tag) {
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat("summary tag \"", absl::CHexEscape(tag),
                       "\" has a character other than printable ASCII"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string TrainSummaryDir(const std::string& model_dir) { return JoinPath(model_dir, "train"); }

std::string EvalSummaryDir(const std::string& model_dir) { return JoinPath(model_dir, "eval"); }

absl::StatusOr<std::unique_ptr<FileSummaryWriter>> FileSummaryWriter::Open(
    Env* env, const std::string& dir, FileSummaryWriterOptions options) {
  const std::string hostname = options.hostname.empty() ? LocalHostname() : options.hostname;
  ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> events,
                   EventFileWriter::Create(env, dir, hostname));
  std::string jsonl_path = JoinPath(dir, kScalarJsonlFileName);
  ASSIGN_OR_RETURN(const int64_t trimmed, TrimPartialLastLine(*env, jsonl_path));
  if (trimmed > 0) {
    LOG(WARNING) << "Cut " << trimmed << " bytes of an unfinished last line off " << jsonl_path;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> jsonl, env->NewAppendableFile(jsonl_path));
  return std::unique_ptr<FileSummaryWriter>(new FileSummaryWriter(
      env, std::move(events), std::move(jsonl), std::move(jsonl_path), options.flush_interval));
}

FileSummaryWriter::FileSummaryWriter(Env* env, std::unique_ptr<EventFileWriter> events,
                                     std::unique_ptr<WritableFile> jsonl, std::string jsonl_path,
                                     absl::Duration flush_interval)
    : env_(env),
      event_file_path_(events->path()),
      jsonl_path_(std::move(jsonl_path)),
      flush_interval_(flush_interval),
      events_(std::move(events)),
      jsonl_(std::move(jsonl)) {
  if (flush_interval_ > absl::ZeroDuration()) {
    flusher_ = std::thread([this] { FlushPeriodically(); });
  }
}

FileSummaryWriter::~FileSummaryWriter() {
  absl::Status closed = Close();
  if (!closed.ok()) LOG(WARNING) << "Closing summaries " << event_file_path_ << ": " << closed;
}

absl::Status FileSummaryWriter::WriteScalar(int64_t step, absl::string_view tag, double value) {
  RETURN_IF_ERROR(CheckTag(tag));
  const absl::Time now = env_->Now();
  const ScalarRecord record{step, EventWallTime(now), std::string(tag), value};
  const tensorflow::Event event = ScalarEvent(step, tag, value, now);
  const std::string line = FormatScalarJsonLine(record);

  absl::MutexLock lock(&mu_);
  if (closing_) {
    return absl::FailedPreconditionError(
        absl::StrCat("summary writer for ", event_file_path_, " is closed"));
  }
  const absl::Status to_events = events_->WriteEvent(event);
  const absl::Status to_jsonl = jsonl_->Append(line);
  dirty_ = true;
  return to_events.ok() ? to_jsonl : to_events;
}

absl::Status FileSummaryWriter::Flush() {
  absl::MutexLock lock(&mu_);
  if (closing_) {
    return absl::FailedPreconditionError(
        absl::StrCat("summary writer for ", event_file_path_, " is closed"));
  }
  return FlushLocked();
}

absl::Status FileSummaryWriter::FlushLocked() {
  const absl::Status events = events_->Flush();
  const absl::Status jsonl = jsonl_->Flush();
  if (events.ok() && jsonl.ok()) dirty_ = false;
  return events.ok() ? jsonl : events;
}

absl::Status FileSummaryWriter::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (closing_) return absl::OkStatus();
    closing_ = true;
  }
  // The flusher wakes on closing_; joined outside the lock it needs.
  if (flusher_.joinable()) flusher_.join();

  absl::MutexLock lock(&mu_);
  const absl::Status events = events_->Close();
  absl::Status jsonl = jsonl_->Sync();
  const absl::Status jsonl_closed = jsonl_->Close();
  if (jsonl.ok()) jsonl = jsonl_closed;
  events_.reset();
  jsonl_.reset();
  return events.ok() ? jsonl : events;
}

void FileSummaryWriter::FlushPeriodically() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    mu_.AwaitWithTimeout(absl::Condition(&closing_), flush_interval_);
    if (closing_) return;
    if (!dirty_) continue;
    const absl::Status flushed = FlushLocked();
    if (!flushed.ok() && !flush_failure_logged_) {
      LOG(WARNING) << "Periodic flush of summaries in " << Dirname(event_file_path_)
                   << " failed (later failures are not logged): " << flushed;
      flush_failure_logged_ = true;
    }
  }
}

}  // namespace pstrain
