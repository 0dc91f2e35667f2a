#ifndef PSTRAIN_CLIENT_SCALE_INBOX_H_
#define PSTRAIN_CLIENT_SCALE_INBOX_H_

// How `pstrain scale` reaches a running `pstrain local`: through files in
// the cluster's run folder, which both can reach without a port, a token or
// a server of their own.
//   <run_dir>/scale/owner           the pid of the `pstrain local` running there
//   <run_dir>/scale/request-<pid>   the request of `pstrain scale` process <pid>
//   <run_dir>/scale/answer-<pid>    its answer
// Each file is written under a temporary name and renamed, so a reader never
// sees half of one; each requester has names of its own, so requests made at
// once queue instead of overwriting each other. `pstrain local` looks for
// requests as it checks its processes (SuperviseTasks, a few times a
// second).
// So that `pstrain scale` finds the cluster without --run_dir, each running
// `pstrain local` also leaves a pointer, a file naming its run folder, in
// ${TMPDIR:-/tmp}/pstrain-local-<uid>/; one whose process has ended is
// ignored (and removed), so a `pstrain local` killed outright misleads no
// one.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/scale_request.h"
#include "common/checkpoint/posix_env.h"

namespace pstrain {

// The receiving end, owned by the `pstrain local` of a run folder; its
// destructor withdraws the owner file and the pointer. Not thread-safe.
class ScaleInbox {
 public:
  // A request found in the inbox: who sent it and what it asks (or why it
  // cannot be read).
  struct Received {
    int requester = 0;
    absl::StatusOr<ScaleRequest> request;
  };

  // Claims `run_dir` (which must exist) for this process: clears requests
  // and answers an earlier run left, writes the owner file and the pointer.
  // FailedPrecondition: a `pstrain local` that still runs owns it. Others:
  // a file could not be written.
  static absl::StatusOr<std::unique_ptr<ScaleInbox>> Open(const std::string& run_dir);

  ScaleInbox(const ScaleInbox&) = delete;
  ScaleInbox& operator=(const ScaleInbox&) = delete;
  ~ScaleInbox();

  // The requests waiting, oldest first, each taken out of the inbox.
  std::vector<Received> Take();

  // Writes the answer `requester` waits for.
  absl::Status Answer(int requester, const ScaleAnswer& answer);

 private:
  ScaleInbox(std::string folder, std::string pointer)
      : folder_(std::move(folder)), pointer_(std::move(pointer)) {}

  PosixEnv env_;
  const std::string folder_;   // <run_dir>/scale
  const std::string pointer_;  // this process's file among the pointers
};

// The run folder of the one `pstrain local` of this user that runs now,
// found by its pointer. NotFound: none runs. FailedPrecondition: several
// do (the message lists their run folders, for --run_dir).
absl::StatusOr<std::string> FindRunningLocalCluster();

// Sends `request` to the `pstrain local` of `run_dir` and waits for its
// answer, at most `timeout`. NotFound: no `pstrain local` runs there.
// Unavailable: it ended before answering. DeadlineExceeded: no answer in
// time (the request is withdrawn if it was not taken yet).
absl::StatusOr<ScaleAnswer> SendScaleRequest(const std::string& run_dir,
                                             const ScaleRequest& request, absl::Duration timeout);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_SCALE_INBOX_H_
