#include "server/coordinator/job_journal.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "google/protobuf/text_format.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/job_state.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr absl::string_view kRecordPrefix = "job-";
constexpr absl::string_view kRecordSuffix = ".pbtxt";
constexpr absl::string_view kCounterName = "last_job_number";
constexpr absl::string_view kChecksumLine = "# crc32c ";
// A record is a spec and a status: kilobytes. Anything far larger is not
// one of ours.
constexpr int64_t kMaxRecordBytes = 4 << 20;

// The number of a record file "job-<n>.pbtxt"; nullopt for other names.
std::optional<int64_t> RecordNumber(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kRecordPrefix) || !absl::ConsumeSuffix(&name, kRecordSuffix)) {
    return std::nullopt;
  }
  int64_t number = 0;
  if (!absl::SimpleAtoi(name, &number) || number < 1) return std::nullopt;
  return number;
}

absl::StatusOr<int64_t> NumberOf(const JobStatus& job) {
  std::optional<int64_t> number = JobNumberFromId(job.job_id());
  if (!number.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id '", job.job_id(), "' is not <name>-<number>"));
  }
  return *number;
}

std::string EncodeRecord(const JobStatus& job) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(job, &text);
  return absl::StrCat(kChecksumLine, absl::StrFormat("%08x", Crc32c(text)), "\n", text);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobJournal>> JobJournal::Open(Env& env, std::string dir,
                                                             JobJournalOptions options) {
  if (options.ended_jobs_kept < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ended_jobs_kept must be >= 0, got ", options.ended_jobs_kept));
  }
  if (absl::Status created = CreateDirs(env, dir); !created.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create the coordinator's state folder ", dir, ": ", created.message()));
  }
  return std::unique_ptr<JobJournal>(new JobJournal(env, std::move(dir), options));
}

JobJournal::JobJournal(Env& env, std::string dir, JobJournalOptions options)
    : env_(env), dir_(std::move(dir)), options_(options) {}

std::string JobJournal::RecordPathFor(int64_t number) const {
  return JoinPath(dir_, absl::StrCat(kRecordPrefix, number, kRecordSuffix));
}

std::string JobJournal::RecordPath(absl::string_view job_id) const {
  std::optional<int64_t> number = JobNumberFromId(job_id);
  return RecordPathFor(number.value_or(0));
}

absl::StatusOr<JournalContents> JobJournal::Load() {
  absl::StatusOr<std::vector<std::string>> names = env_.ListDir(dir_);
  if (!names.ok()) {
    return absl::Status(names.status().code(),
                        absl::StrCat("cannot list the coordinator's state folder ", dir_, ": ",
                                     names.status().message()));
  }
  std::sort(names->begin(), names->end());
  JournalContents contents;
  std::vector<std::pair<int64_t, JobStatus>> jobs;
  for (const std::string& name : *names) {
    const std::string path = JoinPath(dir_, name);
    if (absl::EndsWith(name, ".tmp")) {
      // A write a crash interrupted; the record it was replacing stands.
      if (absl::Status removed = env_.RemoveFile(path); !removed.ok()) {
        LOG(WARNING) << "cannot remove the unfinished " << path << ": " << removed;
      }
      continue;
    }
    if (name == kCounterName) {
      absl::StatusOr<std::string> text = ReadWholeFile(env_, path, 64);
      int64_t counter = 0;
      if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &counter) &&
          counter >= 0) {
        contents.last_job_number = std::max(contents.last_job_number, counter);
      } else {
        RETURN_IF_ERROR(SetAside(
            path,
            text.ok() ? absl::DataLossError(absl::StrCat("not a job number: '",
                                                         absl::CEscape(text->substr(0, 20)), "'"))
                      : text.status(),
            &contents.set_aside));
      }
      continue;
    }
    std::optional<int64_t> number = RecordNumber(name);
    if (!number.has_value()) continue;  // set aside before, or not ours
    absl::StatusOr<JobStatus> job = ReadRecord(path, *number);
    if (!job.ok()) {
      RETURN_IF_ERROR(SetAside(path, job.status(), &contents.set_aside));
      continue;
    }
    contents.last_job_number = std::max(contents.last_job_number, *number);
    jobs.emplace_back(*number, *std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  absl::MutexLock lock(&mu_);
  for (auto& [number, job] : jobs) {
    if (IsEnded(job.state())) ended_.insert(number);
    contents.jobs.push_back(std::move(job));
  }
  // Written back: repairs a counter lost or set aside, and proves the
  // folder can be written before any job depends on it.
  counter_ = -1;
  RETURN_IF_ERROR(RaiseCounter(contents.last_job_number));
  return contents;
}

absl::StatusOr<JobStatus> JobJournal::ReadRecord(const std::string& path, int64_t number) {
  ASSIGN_OR_RETURN(std::string contents, ReadWholeFile(env_, path, kMaxRecordBytes));
  absl::string_view rest = contents;
  const size_t newline = rest.find('\n');
  absl::string_view first_line = rest.substr(0, newline);
  uint32_t stored_crc = 0;
  if (newline == absl::string_view::npos || !absl::ConsumePrefix(&first_line, kChecksumLine) ||
      !absl::SimpleHexAtoi(first_line, &stored_crc)) {
    return absl::DataLossError("it does not start with its \"# crc32c <hex>\" line");
  }
  rest.remove_prefix(newline + 1);
  const uint32_t crc = Crc32c(rest);
  if (crc != stored_crc) {
    return absl::DataLossError(absl::StrFormat(
        "its checksum does not match (%08x stored, %08x computed): the file was changed or "
        "damaged",
        stored_crc, crc));
  }
  JobStatus job;
  google::protobuf::TextFormat::Parser parser;
  // Fields a newer pstrain wrote are skipped, so going back a version keeps
  // the jobs.
  parser.AllowUnknownField(true);
  if (!parser.ParseFromString(std::string(rest), &job)) {
    return absl::DataLossError("it is not a JobStatus in text format");
  }
  if (JobNumberFromId(job.job_id()) != number) {
    return absl::DataLossError(
        absl::StrCat("it holds job '", job.job_id(), "', not a job numbered ", number));
  }
  if (job.state() == JOB_STATE_UNSPECIFIED) return absl::DataLossError("it has no job state");
  return job;
}

absl::Status JobJournal::SetAside(const std::string& path, const absl::Status& why,
                                  std::vector<std::string>* set_aside) {
  absl::StatusOr<std::string> target = SetAsideDamaged(env_, path);
  if (!target.ok()) {
    return absl::Status(target.status().code(), absl::StrCat(why.message(), "; then ",
                                                             target.status().message()));
  }
  LOG(ERROR) << "the coordinator's journal file " << path
             << " cannot be read: " << why.message() << "; moved it to " << *target
             << " and carried on without it";
  set_aside->push_back(absl::StrCat(path, ": ", why.message()));
  return absl::OkStatus();
}

absl::Status JobJournal::Record(const JobStatus& job) {
  ASSIGN_OR_RETURN(const int64_t number, NumberOf(job));
  if (IsEnded(job.state()) || job.state() == JOB_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("job ", job.job_id(), " is ",
                                                   JobState_Name(job.state()),
                                                   "; only a queued or running job is recorded"));
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(RaiseCounter(number));
  return WriteRecord(number, job);
}

absl::Status JobJournal::RecordEnd(const JobStatus& job) {
  ASSIGN_OR_RETURN(const int64_t number, NumberOf(job));
  if (!IsEnded(job.state())) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job.job_id(), " is ", JobState_Name(job.state()), ", not ended"));
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(RaiseCounter(number));
  ended_.insert(number);
  while (static_cast<int>(ended_.size()) > options_.ended_jobs_kept) {
    const int64_t oldest = *ended_.begin();
    ended_.erase(ended_.begin());
    absl::Status removed = env_.RemoveFile(RecordPathFor(oldest));
    if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
    if (oldest == number) return absl::OkStatus();  // none are kept
  }
  return WriteRecord(number, job);
}

absl::Status JobJournal::Forget(absl::string_view job_id) {
  std::optional<int64_t> number = JobNumberFromId(job_id);
  if (!number.has_value()) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  ended_.erase(*number);
  absl::Status removed = env_.RemoveFile(RecordPathFor(*number));
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  return removed;
}

absl::Status JobJournal::WriteRecord(int64_t number, const JobStatus& job) {
  return WriteFileAtomically(env_, RecordPathFor(number), EncodeRecord(job));
}

absl::Status JobJournal::RaiseCounter(int64_t number) {
  if (number <= counter_) return absl::OkStatus();
  RETURN_IF_ERROR(
      WriteFileAtomically(env_, JoinPath(dir_, kCounterName), absl::StrCat(number, "\n")));
  counter_ = number;
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
