#include "bench/sim/sim_job.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace bench {

// Wide-and-deep's dense values: the wide bias, the hidden layer's weights
// and biases over fields * dim inputs, the logit's weights and bias.
int64_t SimDenseFloats(const SimJob& job) {
  const int64_t inputs = int64_t{job.num_fields} * job.dim;
  const int64_t hidden = SimHiddenUnits(job);
  if (job.extra_layers <= 0) return 1 + inputs * hidden + hidden + hidden + 1;
  // hidden -> 2, then 2 -> 2 for each further extra layer, then 2 -> 1.
  return 1 + inputs * hidden + hidden + (hidden * 2 + 2) +
         int64_t{job.extra_layers - 1} * (2 * 2 + 2) + 2 + 1;
}

int64_t SimHiddenUnits(const SimJob& job) {
  const int64_t inputs = int64_t{job.num_fields} * job.dim;
  return std::max<int64_t>(1, (job.dense_floats - 2) / (inputs + 2));
}

std::string SimJobSpecText(const SimJob& job) {
  return absl::StrCat(
      "name: \"sim\"\n"
      "mode: JOB_MODE_TRAIN\n"
      "model { wide_and_deep {\n"
      "  embedding { dim: ",
      job.dim, " }\n  hidden_units: [", SimHiddenUnits(job),
      absl::StrJoin(std::vector<int>(std::max(job.extra_layers, 0), 2), "",
                    [](std::string* out, int width) { absl::StrAppend(out, ", ", width); }),
      "]\n} }\n", "train_data {\n  synthetic_clicks { num_examples: ", job.num_examples,
      " num_fields: ", job.num_fields,
      " vocabulary_per_field: 1000 seed: 7 }\n  batch_size: ", job.batch_size, "\n}\n",
      "optimizer { sgd {} learning_rate: 0.01 }\n", "training { update_mode: UPDATE_MODE_ASYNC }\n",
      "stop { max_seconds: 86400 }\n", "checkpoint { model_dir: \"sim\" every_seconds: 86400 }\n",
      "export { strategy: EXPORT_STRATEGY_NONE }\n");
}

}  // namespace bench
}  // namespace pstrain
