#include "tests/clicks_job.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pstrain {
namespace testing_jobs {
namespace {

constexpr char kTemplate[] = R"pb(
  name: "$NAME"
  mode: $MODE
  model { logistic_regression {} }
  train_data {
    synthetic_clicks { num_examples: $EXAMPLES seed: 5 }
    batch_size: 128
  }
  # The same seed, so the same true model; eval_data reads its test split.
  eval_data {
    synthetic_clicks { num_examples: 4000 seed: 5 }
    batch_size: 1000
  }
  optimizer {
    adagrad {}
    learning_rate: 0.1
  }
  training { steps_per_loop: $LOOP $TRAINING }
  stop { $STOP }
  checkpoint { model_dir: "$DIR" $EVERY }
  eval {
    metrics: [ "loss", "auc" ]
    throttle_secs: 0 $EVAL
  }
)pb";

}  // namespace

std::string ClicksJob::Text() const {
  const std::string stop_text =
      absl::StrCat(max_steps > 0 ? absl::StrCat("max_steps: ", max_steps, " ") : "", stop);
  const std::string every =
      checkpoint_every_steps > 0 ? absl::StrCat("every_steps: ", checkpoint_every_steps) : "";
  return absl::StrReplaceAll(kTemplate, {{"$NAME", name},
                                         {"$MODE", mode},
                                         {"$EXAMPLES", absl::StrCat(num_examples)},
                                         {"$LOOP", absl::StrCat(steps_per_loop)},
                                         {"$TRAINING", training},
                                         {"$STOP", stop_text},
                                         {"$DIR", model_dir},
                                         {"$EVERY", every},
                                         {"$EVAL", eval}});
}

}  // namespace testing_jobs
}  // namespace pstrain
