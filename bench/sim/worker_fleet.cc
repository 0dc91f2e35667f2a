#include "bench/sim/worker_fleet.h"

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/sim/sim_channels.h"

namespace pstrain {
namespace bench {

absl::StatusOr<std::unique_ptr<WorkerFleet>> WorkerFleet::Start(const WorkerFleetOptions& options) {
  if (options.members < 1 || options.channels < 1 || options.driver_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a fleet needs members, channels and driver threads >= 1, got ",
                     options.members, ", ", options.channels, ", ", options.driver_threads));
  }
  if (options.heartbeat_interval <= absl::ZeroDuration() ||
      options.step_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("heartbeat and step intervals must be > 0");
  }
  std::unique_ptr<WorkerFleet> fleet(new WorkerFleet());
  fleet->options_ = options;
  for (int c = 0; c < options.channels; ++c) {
    fleet->coordinator_stubs_.push_back(
        ClusterService::NewStub(SimChannel(options.coordinator_address, c)));
    fleet->shard_stubs_.push_back(ParameterServer::NewStub(SimChannel(options.shard_address, c)));
  }
  std::mt19937_64 random(std::random_device{}());
  const absl::Time start = absl::Now() + absl::Milliseconds(50);
  {
    absl::MutexLock lock(&fleet->mu_);
    for (int m = 0; m < options.members; ++m) {
      uint64_t incarnation = 0;
      while (incarnation == 0) incarnation = random();
      const int c = m % options.channels;
      fleet->workers_.push_back(std::make_unique<LightWorker>(
          options.first_index + m, incarnation, options.worker, *fleet->coordinator_stubs_[c],
          *fleet->shard_stubs_[c], fleet->tally_, fleet->in_flight_));
      fleet->schedule_.Add(m, MemberEvent::kHeartbeat,
                           start + SpreadOffset(m, options.members, options.heartbeat_interval),
                           options.heartbeat_interval);
      fleet->schedule_.Add(m, MemberEvent::kStep,
                           start + SpreadOffset(m, options.members, options.step_interval),
                           options.step_interval);
    }
  }
  for (int t = 0; t < options.driver_threads; ++t) {
    fleet->drivers_.emplace_back([raw = fleet.get()] { raw->Drive(); });
  }
  return fleet;
}

WorkerFleet::~WorkerFleet() { Stop(); }

void WorkerFleet::Drive() {
  for (;;) {
    std::optional<DueEvent> event;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      const absl::Time now = absl::Now();
      event = schedule_.PopDue(now);
      if (!event.has_value()) {
        const absl::Time next = std::min(schedule_.NextDue(), now + absl::Milliseconds(100));
        mu_.AwaitWithDeadline(absl::Condition(&stopping_), next);
        continue;
      }
    }
    tally_.RecordLateness(absl::Now() - event->due);
    LightWorker& worker = *workers_[event->member];
    if (event->kind == MemberEvent::kHeartbeat) {
      worker.OnHeartbeatDue();
    } else {
      worker.OnStepDue();
    }
  }
}

int WorkerFleet::Registered() const {
  int count = 0;
  for (const auto& worker : workers_) count += worker->state().registered ? 1 : 0;
  return count;
}

int WorkerFleet::Assigned() const {
  int count = 0;
  for (const auto& worker : workers_) count += worker->state().job_id.empty() ? 0 : 1;
  return count;
}

int64_t WorkerFleet::SkippedEvents() const {
  absl::MutexLock lock(&mu_);
  return schedule_.skipped();
}

void WorkerFleet::Stop(absl::Duration drain) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (std::thread& driver : drivers_) driver.join();
  for (const auto& worker : workers_) worker->Close();
  const absl::Time give_up = absl::Now() + drain;
  while (in_flight_.load() > 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(20));
  // Past the drain, calls still in flight would touch the workers: keep
  // them (a leak at the end of a run) rather than free them under a call.
  if (in_flight_.load() > 0) {
    for (auto& worker : workers_) worker.release();
  }
}

}  // namespace bench
}  // namespace pstrain
