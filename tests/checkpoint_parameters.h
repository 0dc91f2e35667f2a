#ifndef PSTRAIN_TESTS_CHECKPOINT_PARAMETERS_H_
#define PSTRAIN_TESTS_CHECKPOINT_PARAMETERS_H_

// Every trained number of a checkpoint, read with the checkpoint reader, so
// that end-to-end tests can compare two runs' parameters bit for bit.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pstrain {
namespace testing_checkpoints {

struct CheckpointParameters {
  std::string path;  // model_dir/ckpt-<step>
  int64_t global_step = 0;
  // Per variable name: a dense variable's values followed by each optimizer
  // slot; an embedding table's rows in id order, each its values and slots.
  std::map<std::string, std::vector<float>> values;
  // Per embedding table: its row ids in id order, gathered from every
  // shard file (each holds the rows of its ids).
  std::map<std::string, std::vector<int64_t>> row_ids;
  // Per dense variable: the shard whose file holds it.
  std::map<std::string, int> dense_shard;
};

// The newest checkpoint of `model_dir`, every shard file verified against
// the MANIFEST. NotFound: no checkpoint; the reader's errors otherwise.
absl::StatusOr<CheckpointParameters> ReadNewestCheckpoint(const std::string& model_dir);

// "" when `a` and `b` hold the same variables, the same row ids and the
// same bits in every float; otherwise the first difference: the variable,
// the index and both values (with their bits).
std::string FirstDifference(const CheckpointParameters& a, const CheckpointParameters& b);

}  // namespace testing_checkpoints
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_CHECKPOINT_PARAMETERS_H_
