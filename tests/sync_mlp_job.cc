#include "tests/sync_mlp_job.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pstrain {
namespace testing_jobs {

std::string SyncMlpJob(const std::string& name, int64_t max_steps, int64_t checkpoint_every_steps) {
  return absl::StrReplaceAll(R"pb(
                               name: "$NAME"
                               mode: JOB_MODE_TRAIN
                               model { mlp { hidden_units: [ 400 ] } }
                               train_data {
                                 fashion_mnist {}
                                 batch_size: 64
                                 shuffle_seed: 11
                               }
                               optimizer {
                                 adagrad {}
                                 learning_rate: 0.05
                               }
                               training { update_mode: UPDATE_MODE_SYNC seed: 7 steps_per_loop: 10 }
                               stop { max_steps: $MAX }
                               checkpoint { model_dir: "$NAME" every_steps: $EVERY }
                             )pb",
                             {{"$NAME", name},
                              {"$MAX", absl::StrCat(max_steps)},
                              {"$EVERY", absl::StrCat(checkpoint_every_steps)}});
}

}  // namespace testing_jobs
}  // namespace pstrain
