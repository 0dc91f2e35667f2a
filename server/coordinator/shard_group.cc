#include "server/coordinator/shard_group.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

std::vector<ShardGroup::Shard> Alone(ShardGroup::Shard shard) {
  std::vector<ShardGroup::Shard> one;
  one.push_back(std::move(shard));
  return one;
}

}  // namespace

ShardGroup::ShardGroup(std::vector<Shard> shards)
    : size_(static_cast<int>(shards.size())), replicated_(false) {
  absl::MutexLock lock(&mu_);
  for (Shard& shard : shards) replicas_.push_back(Chain{Alone(std::move(shard))});
}

ShardGroup::ShardGroup(std::vector<Shard> primaries, std::vector<Shard> backups)
    : size_(static_cast<int>(primaries.size())), replicated_(true) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < primaries.size(); ++i) {
    Chain chain{Alone(std::move(primaries[i]))};
    chain.processes.push_back(std::move(backups[i]));
    chain.has_backup = true;
    replicas_.push_back(std::move(chain));
  }
}

const ShardGroup::Shard& ShardGroup::shard(int index) const {
  absl::ReaderMutexLock lock(&mu_);
  const Chain& chain = replicas_[index];
  return chain.processes[chain.primary];
}

std::vector<std::string> ShardGroup::addresses() const {
  std::vector<std::string> addresses;
  for (int i = 0; i < size_; ++i) addresses.push_back(shard(i).address);
  return addresses;
}

uint64_t ShardGroup::layout_epoch() const {
  absl::ReaderMutexLock lock(&mu_);
  return layout_epoch_;
}

std::optional<ShardGroup::Place> ShardGroup::Find(const TaskId& task) const {
  absl::ReaderMutexLock lock(&mu_);
  for (int i = 0; i < size_; ++i) {
    const Chain& chain = replicas_[i];
    for (int p = 0; p < static_cast<int>(chain.processes.size()); ++p) {
      const bool in_chain = p == chain.primary || chain.has_backup;
      const TaskId& t = chain.processes[p].task;
      if (in_chain && t.type() == task.type() && t.index() == task.index()) {
        return Place{i, p == chain.primary};
      }
    }
  }
  return std::nullopt;
}

const ShardGroup::Shard* ShardGroup::backup(int index) const {
  absl::ReaderMutexLock lock(&mu_);
  const Chain& chain = replicas_[index];
  return chain.has_backup ? &chain.processes[1 - chain.primary] : nullptr;
}

ReplicaSetup ShardGroup::SetupLocked(const Chain& chain, bool primary) const {
  ReplicaSetup setup;
  if (!replicated_) return setup;
  setup.set_epoch(chain.epoch);
  if (!primary) {
    setup.set_role(REPLICA_ROLE_BACKUP);
    return setup;
  }
  setup.set_role(REPLICA_ROLE_PRIMARY);
  if (chain.has_backup) setup.set_backup_address(chain.processes[1 - chain.primary].address);
  return setup;
}

absl::StatusOr<ReplicaSetup> ShardGroup::Promote(int index) {
  absl::MutexLock lock(&mu_);
  Chain& chain = replicas_[index];
  if (!chain.has_backup) {
    return absl::FailedPreconditionError(absl::StrCat("shard ", index, " has no backup to promote"));
  }
  chain.primary = 1 - chain.primary;
  chain.has_backup = false;
  ++chain.epoch;
  ++layout_epoch_;
  return SetupLocked(chain, true);
}

absl::StatusOr<ReplicaSetup> ShardGroup::DropBackup(int index) {
  absl::MutexLock lock(&mu_);
  Chain& chain = replicas_[index];
  if (!chain.has_backup) {
    return absl::FailedPreconditionError(absl::StrCat("shard ", index, " has no backup to drop"));
  }
  chain.has_backup = false;
  ++chain.epoch;
  ++layout_epoch_;
  return SetupLocked(chain, true);
}

void ShardGroup::Reset() {
  absl::MutexLock lock(&mu_);
  for (Chain& chain : replicas_) {
    chain.primary = 0;
    chain.has_backup = chain.processes.size() > 1;
    chain.rebuilding = false;
    ++chain.epoch;
  }
  ++layout_epoch_;
}

const ShardGroup::Shard* ShardGroup::outsider(int index) const {
  absl::ReaderMutexLock lock(&mu_);
  const Chain& chain = replicas_[index];
  if (chain.processes.size() < 2 || chain.has_backup || chain.rebuilding) return nullptr;
  return &chain.processes[1 - chain.primary];
}

absl::StatusOr<ShardGroup::Rebuild> ShardGroup::BeginRebuild(int index) {
  absl::MutexLock lock(&mu_);
  Chain& chain = replicas_[index];
  if (chain.processes.size() < 2 || chain.has_backup || chain.rebuilding) {
    return absl::FailedPreconditionError(
        absl::StrCat("shard ", index, " has a backup, or rebuilds one, or has no other process"));
  }
  chain.rebuilding = true;
  ++chain.epoch;
  Rebuild rebuild;
  rebuild.epoch = chain.epoch;
  rebuild.primary = &chain.processes[chain.primary];
  rebuild.backup = &chain.processes[1 - chain.primary];
  rebuild.backup_setup = SetupLocked(chain, false);
  rebuild.primary_setup = SetupLocked(chain, true);
  rebuild.primary_setup.set_backup_address(rebuild.backup->address);
  return rebuild;
}

const ShardGroup::Shard* ShardGroup::rebuilt(int index) const {
  absl::ReaderMutexLock lock(&mu_);
  const Chain& chain = replicas_[index];
  return chain.rebuilding ? &chain.processes[1 - chain.primary] : nullptr;
}

bool ShardGroup::Rebuilding(int index, uint64_t epoch) const {
  absl::ReaderMutexLock lock(&mu_);
  const Chain& chain = replicas_[index];
  return chain.rebuilding && chain.epoch == epoch;
}

absl::StatusOr<ShardGroup::Chain*> ShardGroup::RebuildingLocked(int index, uint64_t epoch) {
  Chain& chain = replicas_[index];
  if (!chain.rebuilding || chain.epoch != epoch) {
    return absl::FailedPreconditionError(
        absl::StrCat("shard ", index, " no longer rebuilds a backup in epoch ", epoch));
  }
  return &chain;
}

absl::Status ShardGroup::JoinBackup(int index, uint64_t epoch) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Chain*> rebuilding = RebuildingLocked(index, epoch);
  if (!rebuilding.ok()) return rebuilding.status();
  Chain& chain = **rebuilding;
  chain.rebuilding = false;
  chain.has_backup = true;
  return absl::OkStatus();
}

absl::StatusOr<ReplicaSetup> ShardGroup::AbandonRebuild(int index, uint64_t epoch) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Chain*> rebuilding = RebuildingLocked(index, epoch);
  if (!rebuilding.ok()) return rebuilding.status();
  Chain& chain = **rebuilding;
  chain.rebuilding = false;
  ++chain.epoch;
  return SetupLocked(chain, true);
}

absl::Status ShardGroup::RunAll(const std::vector<Call>& calls,
                                const std::function<absl::Status(const Call& call)>& fn) const {
  std::vector<absl::Status> results(calls.size());
  std::vector<std::thread> threads;
  threads.reserve(calls.size());
  for (size_t c = 0; c < calls.size(); ++c) {
    threads.emplace_back([&, c] { results[c] = fn(calls[c]); });
  }
  for (std::thread& thread : threads) thread.join();
  int failed = 0;
  int first = -1;
  for (size_t c = 0; c < results.size(); ++c) {
    if (results[c].ok()) continue;
    if (first < 0) first = static_cast<int>(c);
    ++failed;
  }
  if (first < 0) return absl::OkStatus();
  const Shard& shard = *calls[first].process;
  return absl::Status(
      results[first].code(),
      absl::StrCat(TaskName(shard.task), " at ", shard.address, ": ", results[first].message(),
                   failed > 1 ? absl::StrCat(" (and ", failed - 1, " other shards failed)") : ""));
}

absl::Status ShardGroup::ForEach(
    const std::function<absl::Status(int index, ShardClient& client)>& fn) const {
  std::vector<Call> calls;
  for (int i = 0; i < size_; ++i) calls.push_back(Call{i, &shard(i), ReplicaSetup()});
  return RunAll(calls, [&](const Call& call) { return fn(call.shard, *call.process->client); });
}

absl::Status ShardGroup::ForEachReplica(
    const std::function<absl::Status(int index, const ReplicaSetup& setup,
                                     const Shard& process)>& fn) const {
  std::vector<Call> calls;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (int i = 0; i < size_; ++i) {
      const Chain& chain = replicas_[i];
      calls.push_back(Call{i, &chain.processes[chain.primary], SetupLocked(chain, true)});
      if (chain.has_backup) {
        calls.push_back(
            Call{i, &chain.processes[1 - chain.primary], SetupLocked(chain, false)});
      }
    }
  }
  return RunAll(calls,
                [&](const Call& call) { return fn(call.shard, call.setup, *call.process); });
}

absl::Status ShardGroup::ForEachProcess(
    const std::function<absl::Status(const Shard& process)>& fn) const {
  std::vector<Call> primaries, others;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (int i = 0; i < size_; ++i) {
      const Chain& chain = replicas_[i];
      for (size_t p = 0; p < chain.processes.size(); ++p) {
        const bool primary = static_cast<int>(p) == chain.primary;
        (primary ? primaries : others).push_back(Call{i, &chain.processes[p], ReplicaSetup()});
      }
    }
  }
  auto call = [&](const Call& c) { return fn(*c.process); };
  const absl::Status first = RunAll(primaries, call);
  const absl::Status then = RunAll(others, call);
  return first.ok() ? then : first;
}

void ShardGroup::CancelAll() const {
  absl::ReaderMutexLock lock(&mu_);
  for (const Chain& chain : replicas_) {
    for (const Shard& shard : chain.processes) shard.client->Cancel();
  }
}

}  // namespace coordinator
}  // namespace pstrain
