#include "common/export/internal/shard_file_reading.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/shard_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace export_internal {

absl::Status ReadShardFileVariables(
    Env& env, const std::string& checkpoint_dir, const CheckpointShardFile& entry,
    const std::function<absl::Status(ShardVariableValues&)>& visit) {
  ShardFileExpectation expect;
  expect.bytes = entry.bytes();
  expect.crc32c = entry.crc32c();
  expect.check_crc32c = true;
  const std::string path = JoinPath(checkpoint_dir, entry.name());
  ASSIGN_OR_RETURN(std::unique_ptr<ShardFileReader> reader,
                   ShardFileReader::Open(env, path, expect));
  for (int i = 0; i < reader->num_variables(); ++i) {
    const ShardFileVariable& stored = reader->variable(i);
    ShardVariableValues variable;
    variable.name = stored.name;
    variable.embedding = stored.kind == VARIABLE_KIND_EMBEDDING;
    variable.dims = stored.dims;
    if (!variable.embedding) {
      variable.values.resize(stored.num_elements);
      reader->CopyDense(i, /*part=*/0, variable.values.data());
    } else {
      const int64_t dim = stored.dims.size() == 2 ? stored.dims[1] : 0;
      if (dim <= 0 || stored.row_floats < dim) {
        return absl::DataLossError(absl::StrCat(path, ": table ", stored.name, " has rows of ",
                                                stored.row_floats, " floats for dim ", dim));
      }
      // The rows hold the value and then each optimizer slot; only the
      // value is kept.
      std::vector<float> rows(stored.num_rows * stored.row_floats);
      variable.ids.resize(stored.num_rows);
      reader->CopyRows(i, variable.ids.data(), rows.data());
      variable.values.resize(stored.num_rows * dim);
      for (int64_t r = 0; r < stored.num_rows; ++r) {
        std::copy_n(rows.data() + r * stored.row_floats, dim, variable.values.data() + r * dim);
      }
    }
    RETURN_IF_ERROR(visit(variable));
  }
  return absl::OkStatus();
}

}  // namespace export_internal
}  // namespace pstrain
