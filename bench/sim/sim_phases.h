#ifndef PSTRAIN_BENCH_SIM_SIM_PHASES_H_
#define PSTRAIN_BENCH_SIM_SIM_PHASES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/sim/light_worker.h"
#include "bench/sim/sim_figures.h"
#include "bench/sim/sim_job.h"

namespace pstrain {
namespace bench {

// Where the processes come from and go.
struct SimPlace {
  std::string bin_dir;  // empty: this program's runfiles
  std::string run_dir;  // a folder per point is made under it
};

struct CoordinatorPhaseOptions {
  absl::Duration heartbeat_interval = absl::Seconds(2);
  absl::Duration step_interval = absl::Seconds(2);
  int64_t records_per_lease = 640;
  LightWorkerOptions worker;
  SimJob job;
  int channels = 8;
  int driver_threads = 1;
  // Longest wait for every member to hold the job's assignment.
  absl::Duration settle_timeout = absl::Seconds(90);
  absl::Duration warmup = absl::Seconds(2);
  absl::Duration window = absl::Seconds(20);
};

// Runs `members` light workers against a fresh coordinator and shard,
// waits until they all hold the job (or settle_timeout passes: the point's
// `broke` says how far they got), then measures one window. Progress goes
// to stderr. An error only when the processes could not be started.
absl::StatusOr<CoordinatorPoint> MeasureCoordinator(int members,
                                                    const CoordinatorPhaseOptions& options,
                                                    const SimPlace& place);

struct ShardPhaseOptions {
  // The job's dense values (pushed whole by a dense pusher) and rows per
  // sparse push.
  SimJob job;
  int rows = 256;
  std::vector<int> pushers = {1, 8, 64, 512};
  int channels = 8;
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration window = absl::Seconds(5);
};

// One fresh coordinator and shard; for dense then sparse pushes, each
// count of concurrent pushers in turn. Progress to stderr.
absl::StatusOr<std::vector<ShardPoint>> MeasureShard(const ShardPhaseOptions& options,
                                                     const SimPlace& place);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_PHASES_H_
