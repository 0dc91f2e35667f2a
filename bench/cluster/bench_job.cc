#include "bench/cluster/bench_job.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace bench {
namespace {

constexpr int64_t kInputs = 784;
constexpr int64_t kClasses = 10;

}  // namespace

std::string BenchJobSpecText(const BenchJob& job) {
  const bool evaluates = job.target_accuracy > 0;
  std::string text = absl::StrCat(
      "name: \"", job.name, "\"\n",
      "mode: ", evaluates ? "JOB_MODE_TRAIN_AND_EVAL" : "JOB_MODE_TRAIN", "\n",
      "model { mlp { input_dim: ", kInputs, " num_classes: ", kClasses, " hidden_units: [",
      absl::StrJoin(job.hidden_units, ", "), "] activation: ACTIVATION_RELU } }\n", "train_data { ",
      job.train_tfrecord.empty()
          ? absl::StrCat("fashion_mnist { dir: \"", job.data_dir, "\" split: DATA_SPLIT_TRAIN }")
          : absl::StrCat("tfrecord { paths: \"", job.train_tfrecord,
                         "\" dense_features: \"dense\" label: \"label\" } "
                         "read_mode: READ_MODE_STREAMED"),
      " batch_size: 128 shuffle: true }\n", "optimizer { adam {} learning_rate: 0.001",
      job.cosine_decay_steps > 0
          ? absl::StrCat(" schedule { cosine { decay_steps: ", job.cosine_decay_steps,
                         " alpha: 0.1 } }")
          : "",
      " }\n", "training { update_mode: ", job.sync ? "UPDATE_MODE_SYNC" : "UPDATE_MODE_ASYNC",
      job.replicas_to_aggregate > 0
          ? absl::StrCat(" replicas_to_aggregate: ", job.replicas_to_aggregate)
          : "",
      job.compute_threads > 0 ? absl::StrCat(" compute_threads: ", job.compute_threads) : "",
      job.seed > 0 ? absl::StrCat(" seed: ", job.seed) : "",
      job.wire.empty() ? "" : absl::StrCat(" wire { ", job.wire, " }"), " }\n");
  if (evaluates) {
    absl::StrAppend(
        &text, "eval_data { fashion_mnist { dir: \"", job.data_dir,
        "\" split: DATA_SPLIT_TEST } batch_size: 1000 }\n",
        "eval { metrics: [\"loss\", \"accuracy\"] best_metric: \"accuracy\" throttle_secs: 0 }\n",
        "stop { max_steps: ", job.max_steps,
        job.stop_at_target ? absl::StrCat(" target_metric_value: ", job.target_accuracy) : "",
        " }\n", "checkpoint { model_dir: \"", job.model_dir,
        "\" every_steps: ", job.checkpoint_every_steps, " max_to_keep: 3 }\n");
  } else {
    absl::StrAppend(&text, "stop { max_steps: ", job.max_steps, " }\n",
                    "checkpoint { model_dir: \"", job.model_dir,
                    "\" every_seconds: 3600 max_to_keep: 1 }\n");
  }
  return text;
}

int64_t MlpParameters(const std::vector<int64_t>& hidden_units) {
  int64_t parameters = 0;
  int64_t inputs = kInputs;
  for (int64_t units : hidden_units) {
    parameters += inputs * units + units;
    inputs = units;
  }
  return parameters + inputs * kClasses + kClasses;
}

std::vector<int64_t> HiddenUnitsForParameters(int64_t parameters) {
  // h^2 + (784 + 10 + 2) h + 10 = parameters, for two layers of width h.
  const double b = kInputs + kClasses + 2;
  const double h = (-b + std::sqrt(b * b + 4.0 * (parameters - kClasses))) / 2;
  const int64_t width = std::max<int64_t>(1, std::llround(h));
  return {width, width};
}

std::string MlpShape(const std::vector<int64_t>& hidden_units) {
  return absl::StrCat(kInputs, "-", absl::StrJoin(hidden_units, "-"), "-", kClasses);
}

}  // namespace bench
}  // namespace pstrain
