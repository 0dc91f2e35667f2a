#include "bench/sim/shard_load.h"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/sim/push_pull_stream.h"
#include "bench/sim/sim_channels.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace bench {
namespace {

// The figures of a run, shared by every pusher's callbacks.
class LoadLedger {
 public:
  void Record(bool applied, const std::string& otherwise, absl::Duration latency, bool counted) {
    absl::MutexLock lock(&mu_);
    if (!counted) return;
    if (applied) {
      ++figures_.applied;
      figures_.latency.Add(latency);
    } else {
      ++figures_.not_applied[otherwise];
    }
  }
  ShardLoadFigures Take() {
    absl::MutexLock lock(&mu_);
    return std::move(figures_);
  }

 private:
  absl::Mutex mu_;
  ShardLoadFigures figures_ ABSL_GUARDED_BY(mu_);
};

// One closed-loop pusher.
class Pusher {
 public:
  Pusher(ParameterServer::Stub& stub, const ShardTraffic& traffic, int rank, uint64_t incarnation,
         LoadLedger& ledger, std::atomic<bool>& counting, std::atomic<bool>& stopping,
         std::atomic<int>& running)
      : stream_(PushPullStream::Open(stub)),
        traffic_(traffic),
        ledger_(ledger),
        counting_(counting),
        stopping_(stopping),
        running_(running) {
    id_.set_worker(rank);
    id_.set_incarnation(incarnation);
  }

  void PushNext() {
    if (stopping_.load()) {
      stream_->Close();
      running_.fetch_sub(1);
      return;
    }
    id_.set_sequence(id_.sequence() + 1);
    std::vector<PushPullRequest> messages = PushMessages(
        traffic_, id_, version_, (id_.sequence() * 131 + id_.worker() * 7919) % traffic_.id_space);
    const absl::Time started = absl::Now();
    const bool counted = counting_.load();
    stream_->Exchange(
        std::move(messages),
        [this, started, counted](absl::Status status, std::vector<PushPullResponse> answers) {
          bool applied = false;
          std::string otherwise;
          if (!status.ok()) {
            otherwise = absl::StatusCodeToString(status.code());
          } else if (!answers.empty()) {
            const PushResult& result = answers.front().push();
            version_ = std::max(version_, result.version());
            applied = result.outcome() == PUSH_OUTCOME_APPLIED;
            if (!applied) {
              otherwise = PushOutcome_Name(result.outcome());
              if (result.has_status()) {
                absl::StrAppend(&otherwise, " (", result.status().message().substr(0, 160), ")");
              }
            }
          }
          ledger_.Record(applied, otherwise, absl::Now() - started, counted && counting_.load());
          if (absl::IsUnavailable(status)) {  // the stream broke: this pusher stops
            running_.fetch_sub(1);
            return;
          }
          PushNext();
        });
  }

 private:
  std::shared_ptr<PushPullStream> stream_;
  const ShardTraffic& traffic_;
  LoadLedger& ledger_;
  std::atomic<bool>& counting_;
  std::atomic<bool>& stopping_;
  std::atomic<int>& running_;
  PushId id_;
  int64_t version_ = 0;
};

}  // namespace

absl::StatusOr<ShardLoadFigures> RunShardLoad(const ShardLoadOptions& options) {
  if (options.pushers < 1 || options.channels < 1) {
    return absl::InvalidArgumentError("a shard load needs pushers and channels >= 1");
  }
  if (!ShapesKnown(options.traffic.variables)) {
    return absl::InvalidArgumentError("the variables' shapes are not known yet (pull first)");
  }
  std::vector<std::unique_ptr<ParameterServer::Stub>> stubs;
  for (int c = 0; c < options.channels; ++c) {
    stubs.push_back(ParameterServer::NewStub(SimChannel(options.shard_address, c)));
  }
  LoadLedger ledger;
  std::atomic<bool> counting{false};
  std::atomic<bool> stopping{false};
  std::atomic<int> running{options.pushers};
  std::vector<std::unique_ptr<Pusher>> pushers;
  const absl::Time now = absl::Now();
  for (int p = 0; p < options.pushers; ++p) {
    pushers.push_back(std::make_unique<Pusher>(*stubs[p % options.channels], options.traffic, p,
                                               PushIncarnation(now, p), ledger, counting, stopping,
                                               running));
  }
  for (auto& pusher : pushers) pusher->PushNext();
  absl::SleepFor(options.warmup);
  counting.store(true);
  const absl::Time start = absl::Now();
  absl::SleepFor(options.window);
  counting.store(false);
  const absl::Time end = absl::Now();
  stopping.store(true);
  // Each pusher ends at its next answer (a push has a few seconds at most).
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (running.load() > 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(10));
  if (running.load() > 0) {
    for (auto& pusher : pushers) pusher.release();  // still in use by a call
    return absl::DeadlineExceededError(
        absl::StrCat(running.load(),
                     " pushers were still waiting for an answer a minute after "
                     "the window"));
  }
  ShardLoadFigures figures = ledger.Take();
  figures.pushers = options.pushers;
  figures.seconds = absl::ToDoubleSeconds(end - start);
  return figures;
}

}  // namespace bench
}  // namespace pstrain
