#include "bench/sparse/sparse_job.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {

absl::Status SparseJob::Validate() const {
  if (vocabulary <= 0 || num_fields <= 0 || dim <= 0 || num_examples <= 0 || batch_size <= 0) {
    return absl::InvalidArgumentError(
        "vocabulary, fields, dim, examples and batch must all be > 0");
  }
  if (vocabulary % num_fields != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("vocabulary ", vocabulary, " is not a multiple of the fields, ", num_fields));
  }
  if (!(zipf_exponent > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("zipf exponent must be > 1 (the generator's rule), got ", zipf_exponent));
  }
  if (optimizer != "sgd" && optimizer != "adagrad") {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer must be sgd or adagrad, got '", optimizer, "'"));
  }
  for (int64_t units : hidden_units) {
    if (units <= 0) return absl::InvalidArgumentError("hidden units must be > 0");
  }
  return absl::OkStatus();
}

int SparseJob::SlotsPerValue() const { return optimizer == "adagrad" ? 1 : 0; }

int64_t SparseJob::RawBytesPerId() const { return (int64_t{dim} + 1) * 4 * (1 + SlotsPerValue()); }

int64_t SparseJob::DenseFloats() const {
  int64_t floats = 1;  // wide/bias
  int64_t inputs = int64_t{num_fields} * dim;
  for (int64_t units : hidden_units) {
    floats += inputs * units + units;
    inputs = units;
  }
  return floats + inputs + 1;  // logits weights and bias
}

std::string SparseJob::Text() const {
  return absl::StrCat(
      "name: \"sparse-bench\"\n"
      "mode: JOB_MODE_TRAIN\n"
      "model { wide_and_deep {\n"
      "  embedding { dim: ",
      dim, " max_bytes_per_shard: ", max_bytes_per_shard, " }\n", "  hidden_units: [",
      absl::StrJoin(hidden_units, ", "), "]\n} }\n",
      "train_data {\n  synthetic_clicks { num_examples: ", num_examples,
      " num_fields: ", num_fields, " vocabulary_per_field: ", vocabulary / num_fields,
      " zipf_exponent: ", zipf_exponent, " seed: 11 }\n  batch_size: ", batch_size, "\n}\n",
      "optimizer { ", optimizer, " {} learning_rate: 0.05 }\n",
      "training { update_mode: UPDATE_MODE_ASYNC steps_per_loop: 50 }\n",
      "stop { max_seconds: ", max_seconds, " }\n",
      "checkpoint { model_dir: \"sparse-bench\" every_seconds: 86400 }\n",
      "export { strategy: EXPORT_STRATEGY_NONE }\n");
}

}  // namespace pstrain
