#ifndef PSTRAIN_BENCH_SIM_CALL_TALLY_H_
#define PSTRAIN_BENCH_SIM_CALL_TALLY_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/sim/latency_sample.h"

namespace pstrain {
namespace bench {

// The calls a simulated member makes, each tallied on its own.
enum class SimCall {
  kRegister,
  kHeartbeat,
  kAssignment,
  kAcquireLease,
  kCompleteLease,
  kProgress,
  kPull,
  kPush,
};
inline constexpr int kSimCallKinds = 8;

// "heartbeat", "acquire_lease", ...
const char* SimCallName(SimCall call);

// What one kind of call came to over a window.
struct CallFigures {
  int64_t answered = 0;  // OK answers
  // Refusals and failures by status code name ("UNAVAILABLE": 12).
  std::map<std::string, int64_t> errors;
  // Of answered calls and refusals alike: how long until the answer.
  LatencySample latency;

  int64_t failed() const;
};

// Every call of a fleet of simulated members: counts, refusals and
// latencies per kind, and how late the simulator itself ran its members'
// events (a simulator that falls behind would understate the load).
// Thread-safe.
class CallTally {
 public:
  void Record(SimCall call, const absl::Status& status, absl::Duration latency);
  // How late a scheduled event ran after it was due.
  void RecordLateness(absl::Duration late);
  // A heartbeat or step not sent because the member's previous one was
  // still unanswered.
  void RecordOverlap(SimCall call);

  // The figures since the last Reset (or the start), and clears them.
  std::array<CallFigures, kSimCallKinds> Take();
  LatencySample TakeLateness();
  std::array<int64_t, kSimCallKinds> TakeOverlaps();

 private:
  absl::Mutex mu_;
  std::array<CallFigures, kSimCallKinds> calls_ ABSL_GUARDED_BY(mu_);
  LatencySample lateness_ ABSL_GUARDED_BY(mu_);
  std::array<int64_t, kSimCallKinds> overlaps_ ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_CALL_TALLY_H_
