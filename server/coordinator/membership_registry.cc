#include "server/coordinator/membership_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/net/host_port.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"
#include "server/coordinator/task_name.h"
#include "server/coordinator/wait_tracker.h"

namespace pstrain {
namespace coordinator {
namespace {

// Predecessors remembered per task; see Entry::replaced.
constexpr size_t kMaxReplacedIncarnations = 16;

absl::Status ValidateAddress(absl::string_view field, absl::string_view address) {
  if (address.empty()) return absl::OkStatus();
  absl::StatusOr<HostPort> parsed = ParseHostPort(address);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", parsed.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsLive(MemberState state) { return state == MEMBER_STATE_IDLE || state == MEMBER_STATE_BUSY; }

absl::StatusOr<std::unique_ptr<MembershipRegistry>> MembershipRegistry::Create(
    Clock& clock, MembershipOptions options) {
  if (options.heartbeat_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "heartbeat interval must be > 0, got ", absl::FormatDuration(options.heartbeat_interval)));
  }
  if (options.heartbeat_timeout <= options.heartbeat_interval) {
    return absl::InvalidArgumentError(
        absl::StrCat("heartbeat timeout (", absl::FormatDuration(options.heartbeat_timeout),
                     ") must exceed the heartbeat interval (",
                     absl::FormatDuration(options.heartbeat_interval), ")"));
  }
  if (options.max_task_index <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max task index must be > 0, got ", options.max_task_index));
  }
  return std::unique_ptr<MembershipRegistry>(new MembershipRegistry(clock, options));
}

MembershipRegistry::MembershipRegistry(Clock& clock, MembershipOptions options)
    : clock_(clock), options_(options) {}

absl::Status MembershipRegistry::ValidateTask(const TaskId& task) const {
  switch (task.type()) {
    case TASK_TYPE_PS:
    case TASK_TYPE_WORKER:
    case TASK_TYPE_EVALUATOR:
      break;
    case TASK_TYPE_CHIEF:
      return absl::InvalidArgumentError(
          "task type chief cannot register: the coordinator is the chief");
    default:
      return absl::InvalidArgumentError(absl::StrCat("task type ", static_cast<int>(task.type()),
                                                     " is not one of ps, worker or evaluator"));
  }
  if (task.index() < 0 || task.index() >= options_.max_task_index) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task index of ", TaskName(task), " must be in [0, ", options_.max_task_index, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<MembershipRegistry::Entry*> MembershipRegistry::FindCaller(
    const TaskId& task, uint64_t incarnation) const {
  if (absl::Status status = ValidateTask(task); !status.ok()) return status;
  auto it = entries_.find(Key(task.type(), task.index()));
  if (it == entries_.end()) {
    return WithReason(
        absl::NotFoundError(absl::StrCat(TaskName(task), " is not registered; register first")),
        ERROR_REASON_MEMBER_UNKNOWN);
  }
  // The map is only read here; callers holding mu_ exclusively may write.
  Entry* entry = const_cast<Entry*>(&it->second);
  const Member& member = entry->member;
  if (member.incarnation() != incarnation) {
    return WithReason(
        absl::AbortedError(absl::StrCat(TaskName(task), " incarnation ", incarnation,
                                        " is stale: the task restarted with a new incarnation (",
                                        member.incarnation(), ")")),
        ERROR_REASON_STALE_INCARNATION);
  }
  if (member.state() == MEMBER_STATE_LOST) {
    return WithReason(
        absl::AbortedError(absl::StrCat(
            TaskName(task), " was marked lost after ", FormatWaitAge(options_.heartbeat_timeout),
            " without a heartbeat and its work was handed to others; register again")),
        ERROR_REASON_MEMBER_LOST);
  }
  if (member.state() == MEMBER_STATE_LEFT) {
    return WithReason(
        absl::AbortedError(absl::StrCat(TaskName(task), " left the cluster; register again")),
        ERROR_REASON_MEMBER_LOST);
  }
  return entry;
}

absl::StatusOr<RegisterResult> MembershipRegistry::Register(const TaskId& task,
                                                            uint64_t incarnation,
                                                            absl::string_view address,
                                                            absl::string_view metrics_address) {
  if (absl::Status status = ValidateTask(task); !status.ok()) return status;
  if (incarnation == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(TaskName(task), ": incarnation must be non-zero"));
  }
  if (absl::Status status = ValidateAddress("address", address); !status.ok()) return status;
  if (absl::Status status = ValidateAddress("metrics_address", metrics_address); !status.ok()) {
    return status;
  }
  if (task.type() == TASK_TYPE_PS && address.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        TaskName(task), " must register the address of its gRPC server for workers to reach"));
  }

  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  RegisterResult result;
  auto [it, inserted] = entries_.try_emplace(Key(task.type(), task.index()));
  Entry& entry = it->second;
  Member& member = entry.member;
  if (!inserted && member.incarnation() != incarnation) {
    if (std::find(entry.replaced.begin(), entry.replaced.end(), incarnation) !=
        entry.replaced.end()) {
      return WithReason(absl::FailedPreconditionError(absl::StrCat(
                            TaskName(task), " incarnation ", incarnation,
                            " was replaced by a newer process (incarnation ", member.incarnation(),
                            "); this process is stale and should exit")),
                        ERROR_REASON_PROCESS_REPLACED);
    }
    if (IsLive(member.state()) && !member.address().empty() && member.address() != address) {
      return absl::AlreadyExistsError(absl::StrCat(
          TaskName(task), " is held by a live process at ", member.address(), " (incarnation ",
          member.incarnation(), ", last heartbeat ", FormatWaitAge(now - entry.last_heartbeat),
          " ago); is a second process configured as ", TaskName(task),
          "? If the other one is gone, the task is freed after ",
          FormatWaitAge(options_.heartbeat_timeout), " without its heartbeats"));
    }
    result.replaced_incarnation = member.incarnation();
    entry.replaced.push_back(member.incarnation());
    if (entry.replaced.size() > kMaxReplacedIncarnations) entry.replaced.pop_front();
  }

  const bool retry = !inserted && result.replaced_incarnation == 0;
  if (!retry) {
    member.Clear();
    *member.mutable_task() = task;
    member.set_incarnation(incarnation);
    member.set_registered_unix_ms(absl::ToUnixMillis(now));
  }
  if (!IsLive(member.state())) {
    // New, replacing, or coming back after LOST/LEFT: whatever it held before
    // was handed back, so it starts idle.
    member.set_state(MEMBER_STATE_IDLE);
    member.clear_job_id();
  }
  member.set_address(std::string(address));
  member.set_metrics_address(std::string(metrics_address));
  member.set_last_heartbeat_unix_ms(absl::ToUnixMillis(now));
  entry.last_heartbeat = now;
  result.member = member;
  NoteHeard(now);
  return result;
}

absl::Status MembershipRegistry::Heartbeat(const TaskId& task, uint64_t incarnation,
                                           const MemberReport& report) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> entry = FindCaller(task, incarnation);
  if (!entry.ok()) return entry.status();
  (*entry)->last_heartbeat = now;
  NoteHeard(now);
  Member& member = (*entry)->member;
  member.set_last_heartbeat_unix_ms(absl::ToUnixMillis(now));
  member.set_step(report.step);
  member.set_health(report.health);
  member.set_health_detail(report.health_detail);
  member.set_queue_depth(report.queue_depth);
  return absl::OkStatus();
}

absl::Status MembershipRegistry::CheckCaller(const TaskId& task, uint64_t incarnation) const {
  absl::MutexLock lock(&mu_);
  return FindCaller(task, incarnation).status();
}

absl::Status MembershipRegistry::SetJob(const TaskId& task, uint64_t incarnation,
                                        absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> entry = FindCaller(task, incarnation);
  if (!entry.ok()) return entry.status();
  Member& member = (*entry)->member;
  member.set_job_id(std::string(job_id));
  member.set_state(job_id.empty() ? MEMBER_STATE_IDLE : MEMBER_STATE_BUSY);
  return absl::OkStatus();
}

absl::Status MembershipRegistry::Leave(const TaskId& task, uint64_t incarnation) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> entry = FindCaller(task, incarnation);
  if (!entry.ok()) {
    // Leaving again (a retry), or after being marked lost, is leaving.
    if (entry.status().code() != absl::StatusCode::kAborted) return entry.status();
    auto it = entries_.find(Key(task.type(), task.index()));
    if (it == entries_.end() || it->second.member.incarnation() != incarnation) {
      return entry.status();
    }
    entry = &it->second;
  }
  (*entry)->member.set_state(MEMBER_STATE_LEFT);
  (*entry)->member.clear_job_id();
  return absl::OkStatus();
}

absl::Duration MembershipRegistry::ClusterSilence() const {
  // Two or more live members beating every interval are heard at least
  // that often. The silence must be noticed before the first member's
  // deadline: each last beat before a cut falls up to one interval before
  // the cut, so the first deadline passes heartbeat_timeout - interval
  // after it.
  return std::min(2 * options_.heartbeat_interval,
                  options_.heartbeat_timeout - options_.heartbeat_interval);
}

void MembershipRegistry::NoteHeard(absl::Time now) {
  const absl::Duration silence = now - last_heard_;
  if (last_heard_ != absl::InfinitePast() && silence > ClusterSilence()) {
    // Each member's connection may take about as long as the silence
    // lasted to carry a heartbeat again (TCP doubles its wait between
    // retransmissions), so each gets a deadline that long from now.
    const absl::Duration grace = std::max(silence, options_.heartbeat_timeout);
    LOG(WARNING) << "heard from a member again after " << FormatWaitAge(silence)
                 << " without a heartbeat from any: every live member has " << FormatWaitAge(grace)
                 << " from now to be heard";
    for (auto& [key, entry] : entries_) {
      if (!IsLive(entry.member.state())) continue;
      entry.last_heartbeat =
          std::max(entry.last_heartbeat, now + grace - options_.heartbeat_timeout);
    }
  }
  silence_logged_ = false;
  last_heard_ = std::max(last_heard_, now);
}

std::vector<Member> MembershipRegistry::CheckDeadlines() {
  const absl::Time now = clock_.Now();
  std::vector<Member> lost;
  absl::MutexLock lock(&mu_);
  const int live = static_cast<int>(std::count_if(
      entries_.begin(), entries_.end(),
      [](const auto& key_and_entry) { return IsLive(key_and_entry.second.member.state()); }));
  if (live >= 2 && now - last_heard_ > ClusterSilence()) {
    if (!silence_logged_) {
      LOG(WARNING) << "no heartbeat from any of " << live << " live members for "
                   << FormatWaitAge(now - last_heard_)
                   << ": this host's network is the likelier one cut off, so none is marked "
                      "lost until one is heard again";
      silence_logged_ = true;
    }
    return lost;
  }
  for (auto& [key, entry] : entries_) {
    if (!IsLive(entry.member.state())) continue;
    if (now - entry.last_heartbeat > options_.heartbeat_timeout) {
      entry.member.set_state(MEMBER_STATE_LOST);
      lost.push_back(entry.member);
    }
  }
  return lost;
}

std::vector<Member> MembershipRegistry::Members() const {
  absl::MutexLock lock(&mu_);
  std::vector<Member> members;
  members.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) members.push_back(entry.member);
  return members;
}

absl::StatusOr<Member> MembershipRegistry::Get(const TaskId& task) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(Key(task.type(), task.index()));
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(TaskName(task), " is not registered"));
  }
  return it->second.member;
}

bool MembershipRegistry::HasLive(const TaskId& task) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(Key(task.type(), task.index()));
  return it != entries_.end() && IsLive(it->second.member.state());
}

int MembershipRegistry::Count(TaskType type, MemberState state) const {
  absl::MutexLock lock(&mu_);
  int count = 0;
  for (auto it = entries_.lower_bound(Key(type, 0));
       it != entries_.end() && it->first.first == type; ++it) {
    if (it->second.member.state() == state) ++count;
  }
  return count;
}

std::vector<TaskId> MembershipRegistry::MissingTasks(TaskType type, int count) const {
  absl::MutexLock lock(&mu_);
  std::vector<TaskId> missing;
  for (int index = 0; index < std::min(count, options_.max_task_index); ++index) {
    auto it = entries_.find(Key(type, index));
    if (it != entries_.end() && IsLive(it->second.member.state())) continue;
    TaskId task;
    task.set_type(type);
    task.set_index(index);
    missing.push_back(task);
  }
  return missing;
}

}  // namespace coordinator
}  // namespace pstrain
