#include "server/ps/version_gate.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pstrain {

VersionGate::VersionGate(Clock& clock, int64_t version) : clock_(clock), version_(version) {
  deadline_thread_ = std::thread([this] { DeadlineLoop(); });
}

VersionGate::~VersionGate() {
  Shutdown(absl::CancelledError("the shard is shutting down"));
  {
    absl::MutexLock l(&mu_);
    stop_ = true;
  }
  deadline_thread_.join();
}

int64_t VersionGate::version() const {
  absl::MutexLock l(&mu_);
  return version_;
}

std::vector<VersionGate::Callback> VersionGate::TakeSatisfied() {
  std::vector<Callback> done;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (version_ >= it->second.min_version) {
      done.push_back(std::move(it->second.done));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  return done;
}

void VersionGate::Set(int64_t version) {
  std::vector<Callback> done;
  int64_t v;
  {
    absl::MutexLock l(&mu_);
    version_ = version;
    v = version_;
    if (!waiters_.empty()) done = TakeSatisfied();
  }
  for (Callback& cb : done) cb(v);
}

void VersionGate::Increment(int64_t by) {
  std::vector<Callback> done;
  int64_t v;
  {
    absl::MutexLock l(&mu_);
    version_ += by;
    v = version_;
    if (!waiters_.empty()) done = TakeSatisfied();
  }
  for (Callback& cb : done) cb(v);
}

uint64_t VersionGate::WhenAtLeast(int64_t min_version, absl::Time deadline, Callback done) {
  absl::StatusOr<int64_t> now_result;
  uint64_t id;
  {
    absl::MutexLock l(&mu_);
    id = next_id_++;
    if (!shutdown_.ok()) {
      now_result = shutdown_;
    } else if (version_ >= min_version) {
      now_result = version_;
    } else if (clock_.Now() >= deadline) {
      now_result = absl::DeadlineExceededError(
          absl::StrCat("version ", min_version, " not reached; the shard is at ", version_));
    } else {
      waiters_.emplace(id, Waiter{min_version, deadline, std::move(done)});
      ++epoch_;
      return id;
    }
  }
  done(std::move(now_result));
  return id;
}

void VersionGate::Cancel(uint64_t id) {
  Callback done;
  {
    absl::MutexLock l(&mu_);
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    done = std::move(it->second.done);
    waiters_.erase(it);
  }
  done(absl::CancelledError("the read was cancelled"));
}

absl::StatusOr<int64_t> VersionGate::WaitAtLeast(int64_t min_version, absl::Time deadline) {
  absl::MutexLock l(&mu_);
  struct Args {
    VersionGate* gate;
    int64_t min;
  } args{this, min_version};
  const absl::Condition reached(
      +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->gate->version_ >= a->min || !a->gate->shutdown_.ok();
      },
      &args);
  clock_.AwaitWithDeadline(&mu_, reached, deadline);
  if (!shutdown_.ok()) return shutdown_;
  if (version_ >= min_version) return version_;
  return absl::DeadlineExceededError(
      absl::StrCat("version ", min_version, " not reached; the shard is at ", version_));
}

void VersionGate::Shutdown(absl::Status status) {
  std::vector<Callback> done;
  {
    absl::MutexLock l(&mu_);
    if (!shutdown_.ok()) return;
    shutdown_ = status;
    for (auto& [id, w] : waiters_) done.push_back(std::move(w.done));
    waiters_.clear();
    ++epoch_;
  }
  for (Callback& cb : done) cb(status);
}

void VersionGate::DeadlineLoop() {
  absl::MutexLock l(&mu_);
  while (!stop_) {
    absl::Time earliest = absl::InfiniteFuture();
    for (const auto& [id, w] : waiters_) earliest = std::min(earliest, w.deadline);
    struct Args {
      VersionGate* gate;
      uint64_t epoch;
    } args{this, epoch_};
    const absl::Condition changed(
        +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return a->gate->stop_ || a->gate->epoch_ != a->epoch;
        },
        &args);
    clock_.AwaitWithDeadline(&mu_, changed, earliest);
    if (stop_) break;
    const absl::Time now = clock_.Now();
    std::vector<std::pair<Callback, int64_t>> expired;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.deadline <= now) {
        expired.emplace_back(std::move(it->second.done), it->second.min_version);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    if (expired.empty()) continue;
    const int64_t v = version_;
    mu_.Unlock();
    for (auto& [cb, min_version] : expired) {
      cb(absl::DeadlineExceededError(
          absl::StrCat("version ", min_version, " not reached in time; the shard is at ", v)));
    }
    mu_.Lock();
  }
}

}  // namespace pstrain
