#ifndef PSTRAIN_COMMON_EXPORT_MODEL_PARAMETERS_H_
#define PSTRAIN_COMMON_EXPORT_MODEL_PARAMETERS_H_

// The full values of one model's variables in one process, without
// optimizer slots: what a checkpoint holds once its shards are put back
// together, and what an export stores. The evaluator evaluates from it and
// an exported model predicts from it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/model/model.h"
#include "common/model/parameters.h"
#include "common/optimizer/initializer.h"
#include "common/tensor/tensor.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// What a row that no one stored (an id never trained) reads as.
enum class UnstoredRows {
  // Its initial value (common/optimizer/initializer.h), exactly as on the
  // parameter servers and in the single-process trainer.
  kInitialValue,
  // Zeros in a dynamic table, the initial value in a fixed one: how an
  // export serves ids, in pstrain predict and model.onnx alike. A fixed
  // table's ONNX graph holds every row; a dynamic table's cannot, and an
  // id the model never trained then contributes nothing.
  kZeroInDynamicTables,
};

// One embedding table's stored rows. Thread-compatible.
class EmbeddingTableValues {
 public:
  // `initial` gives the rows not stored.
  EmbeddingTableValues(VariableSpec spec, int64_t dim, int64_t vocabulary, Initializer initial)
      : spec_(std::move(spec)), dim_(dim), vocabulary_(vocabulary), initial_(std::move(initial)) {}

  const VariableSpec& spec() const { return spec_; }
  int64_t dim() const { return dim_; }
  // Fixed number of rows, or 0 for a dynamic table.
  int64_t vocabulary() const { return vocabulary_; }
  int64_t num_rows() const { return static_cast<int64_t>(index_.size()); }

  // The stored row `id` (dim() floats), or null.
  const float* Find(int64_t id) const;

  // Stores `values` (dim() floats) as row `id`, replacing a stored one.
  // InvalidArgument: a wrong width, or an id outside a fixed table's rows.
  absl::Status Set(int64_t id, absl::Span<const float> values);

  // The stored ids, ascending.
  std::vector<int64_t> SortedIds() const;

  // The value row `id` has before training touches it.
  const Initializer& initial() const { return initial_; }

 private:
  VariableSpec spec_;
  int64_t dim_;
  int64_t vocabulary_;
  Initializer initial_;
  absl::flat_hash_map<int64_t, int64_t> index_;  // id -> row in values_
  std::vector<float> values_;
};

// Every variable of a model: dense variables as tensors (zero until set),
// embedding tables as the rows that were stored. Thread-compatible:
// PrepareView writes buffers the object owns.
class ModelParameters {
 public:
  // One zeroed tensor per dense variable, one empty table per embedding
  // table, in the order of `defs`, for a job seeded with `job_seed`
  // (TrainingSpec.seed). A row that is read but not stored reads as its
  // initial value (common/optimizer/initializer.h), exactly as on the
  // parameter servers and in the single-process trainer, unless `unstored`
  // says otherwise.
  // InvalidArgument: a name declared twice, a shape that is not valid, a
  // table not shaped [rows >= 0, dim > 0], an initializer that cannot be
  // drawn from.
  static absl::StatusOr<std::unique_ptr<ModelParameters>> Create(
      const std::vector<VariableDef>& defs, uint64_t job_seed,
      UnstoredRows unstored = UnstoredRows::kInitialValue);

  ModelParameters(const ModelParameters&) = delete;
  ModelParameters& operator=(const ModelParameters&) = delete;

  // The variables, in the order Create was given them.
  const std::vector<VariableDef>& definitions() const { return defs_; }

  // Dense variable `name`, or null (no such dense variable).
  Tensor* mutable_dense(const std::string& name);
  const Tensor* dense(const std::string& name) const;
  // Embedding table `name`, or null.
  EmbeddingTableValues* mutable_table(const std::string& name);
  const EmbeddingTableValues* table(const std::string& name) const;

  // Points *view at every dense variable and at the rows `row_ids` names,
  // copied into buffers this object owns until the next call (rows not
  // stored read as Create's `unstored` says, without being stored).
  // InvalidArgument: an unknown table, or an id outside a fixed table.
  absl::Status PrepareView(const RowIds& row_ids, ParameterView* view);

 private:
  explicit ModelParameters(UnstoredRows unstored) : unstored_(unstored) {}

  std::vector<VariableDef> defs_;
  const UnstoredRows unstored_;
  absl::flat_hash_map<std::string, Tensor> dense_;
  absl::flat_hash_map<std::string, EmbeddingTableValues> tables_;
  // The rows of the last PrepareView, per table; one entry per table from
  // Create on, so pointers to them stay valid.
  absl::flat_hash_map<std::string, EmbeddingRows> views_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_MODEL_PARAMETERS_H_
