#ifndef PSTRAIN_BENCH_SIM_SIM_FIGURES_H_
#define PSTRAIN_BENCH_SIM_SIM_FIGURES_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/sim/call_tally.h"
#include "bench/sim/latency_sample.h"

namespace pstrain {
namespace bench {

// The coordinator under `members` light workers, over one measured window.
struct CoordinatorPoint {
  int members = 0;
  // Members registered and holding the job's assignment when the window
  // began.
  int registered = 0;
  int assigned = 0;
  double seconds = 0;          // the window
  double cpu_seconds = 0;      // the coordinator's, in the window
  int64_t resident_bytes = 0;  // the coordinator's at the window's end
  // The simulator's own CPU in the window: near the machine's cores, it is
  // the simulator, not the coordinator, that limits the point.
  double simulator_cpu_seconds = 0;
  std::array<CallFigures, kSimCallKinds> calls;
  // How late the simulator ran its members' events, and those it skipped:
  // a late simulator sends less than the members would.
  LatencySample lateness;
  int64_t skipped_events = 0;
  // What went wrong first at this count (empty: nothing).
  std::string broke;

  // Microseconds of coordinator CPU per member per second of the window.
  double CpuMicrosPerMemberSecond() const;
  const CallFigures& call(SimCall kind) const { return calls[static_cast<int>(kind)]; }
};

// A shard under concurrent pushers of one kind over one window.
struct ShardPoint {
  std::string kind;  // "dense" or "sparse"
  int pushers = 0;
  int64_t push_bytes = 0;  // gradient bytes of one push
  double seconds = 0;
  int64_t applied = 0;
  int64_t not_applied = 0;
  std::string not_applied_detail;  // "UNAVAILABLE: 3"
  LatencySample latency;
  double cpu_seconds = 0;      // the shard's, in the window
  int64_t resident_bytes = 0;  // the shard's at the window's end
  std::string broke;

  double AppliedPerSecond() const { return seconds > 0 ? applied / seconds : 0; }
};

// A whole run of the simulator.
struct SimRun {
  std::string command;
  // How the members behaved.
  double heartbeat_interval_secs = 0;
  double step_interval_secs = 0;
  int64_t member_push_bytes = 0;
  int64_t records_per_lease = 0;
  int steps_per_report = 0;
  std::vector<CoordinatorPoint> coordinator;  // in member order, the first the base
  std::vector<ShardPoint> shard;              // per kind, the one-pusher point first
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_FIGURES_H_
