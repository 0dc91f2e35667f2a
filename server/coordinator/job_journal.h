#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_JOURNAL_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/checkpoint/env.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

struct JobJournalOptions {
  // Ended jobs whose final status stays in the journal (those with the
  // highest job numbers), so that `pstrain status` still answers for the
  // job that ran when the coordinator restarted. Default 20: a few
  // kilobytes each; older ones are removed as new ones end.
  int ended_jobs_kept = 20;
};

// What a journal held when the coordinator started.
struct JournalContents {
  // The highest job number ever given (0: none). A job's id ends in its
  // number ("clicks-7"); new ones must be numbered above it.
  int64_t last_job_number = 0;
  // Every readable record, oldest job number first: queued, running (or
  // finishing) and recently ended jobs.
  std::vector<JobStatus> jobs;
  // The damaged files that were set aside, each "<path>: <why>".
  std::vector<std::string> set_aside;
};

// The coordinator's durable record of its jobs, so that one that restarts
// (killed, rescheduled, upgraded) finds the job that was running and the
// queue. Under a state folder:
//   job-<n>.pbtxt     one per job: its JobStatus in protobuf text format
//                     (id, spec with every path confined, submit time,
//                     state; the final status once it ended), after a
//                     first line "# crc32c <hex>" of the rest
//   last_job_number   the job-id counter, one number
// Every file is replaced atomically (write a temporary file, fsync,
// rename, fsync the folder), so a crash leaves the old record or the new
// one. A record that cannot be read is renamed <file>.damaged, never
// deleted, and reported. Thread-safe.
class JobJournal {
 public:
  // Creates `dir` (and its parents) if missing.
  // FailedPrecondition: `dir` cannot be created (the message names it).
  static absl::StatusOr<std::unique_ptr<JobJournal>> Open(Env& env, std::string dir,
                                                          JobJournalOptions options = {});

  JobJournal(const JobJournal&) = delete;
  JobJournal& operator=(const JobJournal&) = delete;

  // Reads every record and the counter, sets damaged files aside, removes
  // temporary files a crash left, and writes the counter back (so a folder
  // that cannot be written is found now, not at the first submit). Call
  // once, before the writes below.
  // Errors: the folder cannot be listed, or the counter cannot be written.
  absl::StatusOr<JournalContents> Load();

  // Writes the record of a queued or running job, replacing its previous
  // one, and raises the counter to its number.
  // InvalidArgument: the id has no number, or the job has ended (RecordEnd).
  // Other codes: from the Env, naming the file.
  absl::Status Record(const JobStatus& job);

  // Replaces the job's record by its final status, and removes the records
  // of ended jobs beyond ended_jobs_kept.
  // InvalidArgument: the id has no number, or the job has not ended.
  absl::Status RecordEnd(const JobStatus& job);

  // Removes the job's record; OK if there is none.
  absl::Status Forget(absl::string_view job_id);

  const std::string& dir() const { return dir_; }
  // Where the record of `job_id` is (or would be).
  std::string RecordPath(absl::string_view job_id) const;

 private:
  JobJournal(Env& env, std::string dir, JobJournalOptions options);

  std::string RecordPathFor(int64_t number) const;
  // Reads one record; DataLoss with why when it is damaged.
  absl::StatusOr<JobStatus> ReadRecord(const std::string& path, int64_t number);
  // Renames a damaged file to <path>.damaged (or .damaged-<n>).
  absl::Status SetAside(const std::string& path, const absl::Status& why,
                        std::vector<std::string>* set_aside);
  absl::Status WriteRecord(int64_t number, const JobStatus& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RaiseCounter(int64_t number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  Env& env_;
  const std::string dir_;
  const JobJournalOptions options_;

  // Held across each write: two writers of one file at once would share
  // its temporary name.
  absl::Mutex mu_;
  int64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  // Numbers of the ended jobs whose records are kept.
  std::set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_JOURNAL_H_
