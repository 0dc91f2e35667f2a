#include "bench/sim/call_tally.h"

#include <utility>

#include "absl/status/status.h"

namespace pstrain {
namespace bench {

const char* SimCallName(SimCall call) {
  switch (call) {
    case SimCall::kRegister:
      return "register";
    case SimCall::kHeartbeat:
      return "heartbeat";
    case SimCall::kAssignment:
      return "get_assignment";
    case SimCall::kAcquireLease:
      return "acquire_lease";
    case SimCall::kCompleteLease:
      return "complete_lease";
    case SimCall::kProgress:
      return "report_progress";
    case SimCall::kPull:
      return "pull";
    case SimCall::kPush:
      return "push";
  }
  return "unknown";
}

int64_t CallFigures::failed() const {
  int64_t total = 0;
  for (const auto& [code, count] : errors) total += count;
  return total;
}

void CallTally::Record(SimCall call, const absl::Status& status, absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  CallFigures& figures = calls_[static_cast<int>(call)];
  if (status.ok()) {
    ++figures.answered;
  } else {
    ++figures.errors[absl::StatusCodeToString(status.code())];
  }
  figures.latency.Add(latency);
}

void CallTally::RecordLateness(absl::Duration late) {
  absl::MutexLock lock(&mu_);
  lateness_.Add(late);
}

void CallTally::RecordOverlap(SimCall call) {
  absl::MutexLock lock(&mu_);
  ++overlaps_[static_cast<int>(call)];
}

std::array<CallFigures, kSimCallKinds> CallTally::Take() {
  absl::MutexLock lock(&mu_);
  return std::exchange(calls_, {});
}

LatencySample CallTally::TakeLateness() {
  absl::MutexLock lock(&mu_);
  return std::exchange(lateness_, {});
}

std::array<int64_t, kSimCallKinds> CallTally::TakeOverlaps() {
  absl::MutexLock lock(&mu_);
  return std::exchange(overlaps_, {});
}

}  // namespace bench
}  // namespace pstrain
