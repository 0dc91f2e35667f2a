#ifndef PSTRAIN_CLIENT_SCALE_REQUEST_H_
#define PSTRAIN_CLIENT_SCALE_REQUEST_H_

// What `pstrain scale` asks of a running `pstrain local`, and its answer, as
// the small text files they exchange through the cluster's run folder
// (scale_inbox.h): "key=value" lines, so a person can read them too.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace pstrain {

// The most workers a local cluster may be scaled to: every one is a process
// on this machine, and far more than its cores only slows each other down.
inline constexpr int kMaxLocalWorkers = 64;

struct ScaleRequest {
  // The number of workers wanted, 1 to kMaxLocalWorkers.
  int workers = 0;
  // How long a removed worker has from SIGTERM to exit before SIGKILL;
  // Kubernetes' terminationGracePeriodSeconds default.
  absl::Duration grace = absl::Seconds(30);
};

// InvalidArgument naming the bound a request breaks (fewer than 1 worker,
// more than kMaxLocalWorkers, a negative grace).
absl::Status CheckScaleRequest(const ScaleRequest& request);

// "workers=3\ngrace_secs=30\n".
std::string FormatScaleRequest(const ScaleRequest& request);

// The request in `text`, checked. InvalidArgument: a line that is not
// key=value, an unknown key, a value that is not a number, no workers
// line, or a request CheckScaleRequest refuses.
absl::StatusOr<ScaleRequest> ParseScaleRequest(absl::string_view text);

struct ScaleAnswer {
  // OK when the cluster has the workers asked for; otherwise why not (the
  // changes made before the failure are in `changes`).
  absl::Status result;
  // The workers running once the request was handled.
  int workers = 0;
  // One line per worker added or removed, in order ("worker/2 joined: ...").
  std::vector<std::string> changes;
};

// "code=0\nworkers=3\nchange=worker/2 joined: ...\n"; a failure adds
// "error=<message>" (its newlines as spaces).
std::string FormatScaleAnswer(const ScaleAnswer& answer);

// DataLoss: `text` is not an answer FormatScaleAnswer wrote.
absl::StatusOr<ScaleAnswer> ParseScaleAnswer(absl::string_view text);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_SCALE_REQUEST_H_
