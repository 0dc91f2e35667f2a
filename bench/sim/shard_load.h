#ifndef PSTRAIN_BENCH_SIM_SHARD_LOAD_H_
#define PSTRAIN_BENCH_SIM_SHARD_LOAD_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/sim/latency_sample.h"
#include "bench/sim/shard_tensors.h"

namespace pstrain {
namespace bench {

struct ShardLoadOptions {
  std::string shard_address;
  // The job's variables (shapes known), run and what to push: dense
  // variables, table rows, or both.
  ShardTraffic traffic;
  // Concurrent pushers, each on a PushPull stream of its own with a worker
  // rank of its own (0 .. pushers - 1, below the shard's max_workers), each
  // pushing again as soon as its push is answered.
  int pushers = 8;
  // Connections the pushers' streams share. Default 8.
  int channels = 8;
  // Pushes before the window (streams opened, rows admitted), then the
  // measured window.
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration window = absl::Seconds(5);
};

// What a shard did for the pushers in the window.
struct ShardLoadFigures {
  int pushers = 0;
  double seconds = 0;
  int64_t applied = 0;
  // Answered with another outcome, refused, or failed, by outcome or code.
  std::map<std::string, int64_t> not_applied;
  LatencySample latency;  // applied pushes, from first byte sent to answer
  double AppliedPerSecond() const { return seconds > 0 ? applied / seconds : 0; }
};

// Closed-loop pushers against one shard: `pushers` streams, each keeping
// one push in flight. Blocks for warmup + window; the pushers run on gRPC's
// callback threads. InvalidArgument: no pushers, or shapes not known.
absl::StatusOr<ShardLoadFigures> RunShardLoad(const ShardLoadOptions& options);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SHARD_LOAD_H_
