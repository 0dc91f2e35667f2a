#ifndef PSTRAIN_COMMON_TRAINING_VARIABLE_STORE_H_
#define PSTRAIN_COMMON_TRAINING_VARIABLE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/shard_file.h"
#include "common/model/model.h"
#include "common/optimizer/initializer.h"
#include "common/optimizer/optimizer.h"

namespace pstrain {

// Every variable of one model and its optimizer slots, in this process: the
// single-process trainer's stand-in for the parameter servers. Dense
// variables are tensors; embedding tables are hash maps of rows created (and
// initialised) when first read, so fixed and dynamic tables behave alike.
// Thread-compatible.
class VariableStore {
 public:
  // Creates and initialises every dense variable, drawing initial values as
  // the parameter servers do for a job seeded with `job_seed`
  // (TrainingSpec.seed; common/optimizer/initializer.h). Borrows
  // `optimizer`, which must outlive the store. InvalidArgument: duplicate
  // names, a shape that is not valid, an initializer that cannot be drawn
  // from.
  static absl::StatusOr<std::unique_ptr<VariableStore>> Create(const std::vector<VariableDef>& defs,
                                                               uint64_t job_seed,
                                                               const Optimizer* optimizer);

  // Points *view at every dense variable and at the rows `row_ids` names
  // (copied into buffers the store owns until the next call), creating rows
  // never read before. InvalidArgument: an unknown table, or an id outside a
  // fixed table's vocabulary.
  absl::Status PrepareView(const RowIds& row_ids, ParameterView* view);

  // Applies one update of every trainable variable from `gradients` (dense
  // ones whole, tables by the rows given). InvalidArgument: a gradient for
  // an unknown variable, of the wrong shape, or for a row never read;
  // nothing is partly applied then... except earlier variables of the same
  // call, so callers treat the error as fatal to the run.
  absl::Status Apply(const Gradients& gradients, const UpdateStep& step);

  // The value of dense variable `name`, or null.
  const Tensor* dense(const std::string& name) const;
  // A copy of row `id` of table `name`. NotFound: no such table or row.
  absl::StatusOr<std::vector<float>> Row(const std::string& name, int64_t id) const;
  // Rows table `name` holds.
  int64_t num_rows(const std::string& name) const;

  // Writes every variable with its optimizer slots to `writer` as the one
  // shard of a checkpoint, the file a parameter server holding them all
  // would write (common/checkpoint/shard_file.h), then commits it.
  // `header` gives the job id and the step; the rest of it is filled here.
  // The exactly-once state is empty: nothing pushed to this store. A
  // variable that is not trained keeps its slots' initial values. Errors
  // of the writer.
  absl::StatusOr<ShardFileInfo> WriteCheckpointShard(ShardFileHeader header,
                                                     ShardFileWriter& writer) const;

 private:
  struct DenseVariable {
    VariableDef def;
    Tensor value;
    std::vector<Tensor> slots;
  };
  struct Table {
    VariableDef def;
    Initializer init;
    int64_t dim = 0;
    int64_t vocabulary = 0;  // 0: dynamic
    // Each row: dim values then dim per slot.
    absl::flat_hash_map<int64_t, std::vector<float>> rows;
    EmbeddingRows view;  // the rows of the last PrepareView
  };

  explicit VariableStore(const Optimizer* optimizer) : optimizer_(optimizer) {}
  absl::StatusOr<std::vector<float>*> GetOrCreateRow(Table* table, int64_t id);

  const Optimizer* const optimizer_;
  absl::flat_hash_map<std::string, DenseVariable> dense_;
  absl::flat_hash_map<std::string, Table> tables_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TRAINING_VARIABLE_STORE_H_
