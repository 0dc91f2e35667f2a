#ifndef PSTRAIN_WORKER_SHARD_SLICER_H_
#define PSTRAIN_WORKER_SHARD_SLICER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/model/model.h"
#include "common/tensor/tensor_shape.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace worker {

// A dense variable and the shard that holds it.
struct DenseVariableSlot {
  std::string name;
  Shape shape;
  int shard = 0;
};

// An embedding table; its rows are spread over every shard.
struct EmbeddingTableSlot {
  std::string name;
  int64_t dim = 0;
};

// Where a job's variables live on its parameter-server shards, and how to
// split reads and gradients by shard (ps-lite's Slicer): dense variables go
// to the shard the placement names, embedding rows to the shard their id
// hashes to. Immutable after Create; thread-safe.
class ShardSlicer {
 public:
  // `variables` as the model declares them; `placements` from the
  // assignment. InvalidArgument: num_shards < 1, a dense variable without
  // a placement or placed outside [0, num_shards), an embedding table
  // placed on one shard, or a variable that is not float32 or has a bad
  // shape.
  static absl::StatusOr<ShardSlicer> Create(
      const std::vector<VariableDef>& variables,
      const google::protobuf::RepeatedPtrField<VariablePlacement>& placements, int num_shards);

  int num_shards() const { return num_shards_; }
  const std::vector<DenseVariableSlot>& dense() const { return dense_; }
  const std::vector<EmbeddingTableSlot>& tables() const { return tables_; }
  // Indices into dense() of the variables held by `shard`.
  const std::vector<int>& dense_on(int shard) const { return dense_on_[shard]; }

  // Whether `shard` holds anything of this job: a dense variable, or rows of
  // a table (every shard does when the model has tables). A worker pulls
  // from and pushes to exactly these shards, every step, so that a sync
  // round on each of them hears from every worker.
  bool involves(int shard) const { return !dense_on_[shard].empty() || !tables_.empty(); }

  // The dense variable or table named `name`, or null.
  const DenseVariableSlot* FindDense(const std::string& name) const;
  const EmbeddingTableSlot* FindTable(const std::string& name) const;

  // For each shard, the positions in `ids` of the ids it holds, in order.
  std::vector<std::vector<int32_t>> SliceIds(absl::Span<const int64_t> ids) const;

 private:
  int num_shards_ = 0;
  std::vector<DenseVariableSlot> dense_;
  std::vector<EmbeddingTableSlot> tables_;
  std::vector<std::vector<int>> dense_on_;
  absl::flat_hash_map<std::string, int> dense_index_;
  absl::flat_hash_map<std::string, int> table_index_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_SHARD_SLICER_H_
