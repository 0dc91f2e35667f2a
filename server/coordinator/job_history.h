#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_HISTORY_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace coordinator {

struct JobHistoryOptions {
  // Jobs whose events are kept; past that, the job that has gone longest
  // without an event is forgotten. Default 16.
  size_t jobs = 16;
  // Progress events kept per job. Past that, every other one is dropped and
  // from then on only every other one is kept (then every fourth, ...), so
  // a long job's curves keep their shape in a bounded number of points; the
  // newest is always kept. Default 1000.
  size_t progress_points = 1000;
  // Other events (state changes, checkpoints, evaluations, failures) kept
  // per job, the newest. Default 500.
  size_t other_events = 500;
};

// The events of recent jobs from their submit on, as WatchJob sends them,
// for the console's plots and event log: what a watch that started late
// has missed. Each event of a job has a sequence number, increasing, so a
// reader polls for what is new. In memory only: a restarted coordinator
// starts a new history. Thread-safe.
class JobHistory {
 public:
  struct Read {
    // Oldest first.
    std::vector<JobEvent> events;
    // The sequence number to read after next time.
    uint64_t next = 0;
  };

  explicit JobHistory(JobHistoryOptions options = {});

  JobHistory(const JobHistory&) = delete;
  JobHistory& operator=(const JobHistory&) = delete;

  void Append(absl::string_view job_id, const JobEvent& event) ABSL_LOCKS_EXCLUDED(mu_);

  // Whether it holds the job (has seen an event of it and not forgotten it).
  bool Holds(absl::string_view job_id) const ABSL_LOCKS_EXCLUDED(mu_);
  // Appends `events` to a job it does not hold, as Append would each;
  // false, appending nothing, when it holds the job already (events came
  // meanwhile).
  bool Seed(absl::string_view job_id, const std::vector<JobEvent>& events) ABSL_LOCKS_EXCLUDED(mu_);

  // The job's events numbered above `after`. A job never seen or forgotten
  // has none (next = after).
  Read After(absl::string_view job_id, uint64_t after) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Events {
    std::map<uint64_t, JobEvent> by_sequence;
    uint64_t last_sequence = 0;
    // Progress events seen, and the spacing of those kept (a power of 2).
    uint64_t progress_seen = 0;
    uint64_t progress_stride = 1;
    size_t progress_kept = 0;
    // The newest progress event, kept though it is off the stride; 0: none.
    uint64_t off_stride_newest = 0;
    size_t others_kept = 0;
    // Where the job stands in recent_.
    std::list<std::string>::iterator recency;
  };

  // The job's entry, made (and the longest quiet job forgotten) when new,
  // marked the most recently active.
  Events& Touch(absl::string_view job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AppendLocked(Events& job, const JobEvent& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AppendProgress(Events& job, const JobEvent& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AppendOther(Events& job, const JobEvent& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const JobHistoryOptions options_;

  mutable absl::Mutex mu_;
  std::map<std::string, Events, std::less<>> jobs_ ABSL_GUARDED_BY(mu_);
  // Job ids, the one with the newest event first.
  std::list<std::string> recent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_HISTORY_H_
