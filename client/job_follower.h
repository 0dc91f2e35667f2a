#ifndef PSTRAIN_CLIENT_JOB_FOLLOWER_H_
#define PSTRAIN_CLIENT_JOB_FOLLOWER_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/job_event_printer.h"
#include "client/job_service_client.h"
#include "client/output_options.h"
#include "grpcpp/client_context.h"

namespace pstrain {

// Follows one job's event stream to its end, printing progress,
// checkpoints, evaluations and state changes as they come (`pstrain watch`,
// `pstrain local`). Follow() runs on one thread; Cancel() and Announce()
// may be called from any other.
class JobFollower {
 public:
  JobFollower(JobServiceClient& client, std::ostream& out, OutputOptions options);

  // Prints the job's events until it ends, then returns its final status.
  // When the coordinator goes away meanwhile, it says so and waits up to
  // `reconnect_window` for it to answer again (a restarted coordinator
  // resumes its running job), then follows on.
  // NotFound: no such job. Unavailable: the coordinator cannot be reached,
  // or went away and was not back within `reconnect_window`.
  // DeadlineExceeded: the job did not end within `deadline`.
  // Cancelled: Cancel() was called; the message is its reason.
  absl::StatusOr<JobStatus> Follow(const std::string& job_id, absl::Duration deadline,
                                   absl::Duration reconnect_window = absl::ZeroDuration());

  // Ends Follow() at once with Cancelled(reason). Safe before, during or
  // after Follow(); a Follow() that starts later returns at once.
  void Cancel(const std::string& reason);

  // Prints a line of the caller's between events (not in JSON output).
  void Announce(const std::string& line);

 private:
  // Prints one WatchJob stream's events until it ends. OK when the job
  // ended; otherwise why the stream broke (Explain'd).
  absl::Status WatchUntilEnd(const std::string& job_id, absl::Time give_up);
  // Asks for the job once a second until the coordinator answers with its
  // status, `until` passes (Unavailable, naming `window`) or Cancel() is
  // called.
  absl::StatusOr<JobStatus> AwaitCoordinator(const std::string& job_id, absl::Time until,
                                             absl::Duration window);
  void FinishPrinting();

  JobServiceClient& client_;
  std::ostream& out_;
  const OutputOptions options_;

  absl::Mutex mu_;
  std::unique_ptr<JobEventPrinter> printer_ ABSL_GUARDED_BY(mu_);
  grpc::ClientContext* stream_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::string cancel_reason_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_FOLLOWER_H_
