#ifndef PSTRAIN_BENCH_SIM_SHARD_TENSORS_H_
#define PSTRAIN_BENCH_SIM_SHARD_TENSORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace bench {

// A variable of the job on the simulated shard: dense with its dims, or an
// embedding table with its row width (known once a pull has answered).
struct SimVariable {
  std::string name;
  bool table = false;
  std::vector<int64_t> dims;  // dense
  int64_t row_width = 0;      // table
  int64_t DenseFloats() const;
};

// What a simulated member pushes and pulls on shard 0 of a job, and how.
struct ShardTraffic {
  std::string job_id;
  uint64_t generation = 0;
  std::vector<SimVariable> variables;
  bool dense = true;   // push and pull the dense variables
  bool sparse = true;  // push and pull rows of the tables
  // Rows per table per push and pull; ids are drawn from [0, id_space).
  int rows = 64;
  int64_t id_space = 100000;
  int64_t chunk_bytes = 1 << 20;
};

// The variables an assignment places on shard 0 (dense) or spreads over
// every shard (tables), shapes still unknown.
std::vector<SimVariable> VariablesOf(const Assignment& assignment);

// One pull of every dense variable and of `rows` ids per table starting at
// `first_id`.
PushPullRequest PullMessage(const ShardTraffic& traffic, int64_t first_id);

// Learns the dense variables' dims and the tables' row widths from a pull's
// answers. InvalidArgument: an answer names a variable not asked for.
absl::Status LearnShapes(const std::vector<PushPullResponse>& answers,
                         std::vector<SimVariable>* variables);

// True once every variable's shape is known.
bool ShapesKnown(const std::vector<SimVariable>& variables);

// A PushId.incarnation above every earlier one of the same worker rank, as
// pstrain-worker numbers its runs (a shard refuses pushes of an older
// incarnation than the newest it saw): the microseconds since the epoch at
// `now` above 12 low bits of `salt`. Never 0.
uint64_t PushIncarnation(absl::Time now, uint64_t salt);

// One push of gradients (a small constant) for every dense variable, cut
// into pieces of at most chunk_bytes, and `rows` rows per table from
// `first_id`: the messages in order, the last with end_of_push.
std::vector<PushPullRequest> PushMessages(const ShardTraffic& traffic, const PushId& id,
                                          int64_t base_version, int64_t first_id);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SHARD_TENSORS_H_
