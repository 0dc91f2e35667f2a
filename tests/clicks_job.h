#ifndef PSTRAIN_TESTS_CLICKS_JOB_H_
#define PSTRAIN_TESTS_CLICKS_JOB_H_

// The job most end-to-end tests run: logistic regression (Adagrad) on
// synthetic click logs, a few hundred steps a second on one worker, with
// evaluations of loss and AUC on the test split of the same true model.
// Tests set what they are about and leave the rest.

#include <cstdint>
#include <string>

namespace pstrain {
namespace testing_jobs {

struct ClicksJob {
  std::string name = "clicks";
  std::string mode = "JOB_MODE_TRAIN_AND_EVAL";
  std::string model_dir = "clicks";  // under the cluster's checkpoint root
  int64_t num_examples = 20000;
  int64_t max_steps = 150;  // 0: none (then `stop` must end the job)
  int32_t steps_per_loop = 25;
  int64_t checkpoint_every_steps = 0;  // 0: the default schedule
  // More fields of the TrainingSpec, StopSpec and EvalSpec, in text
  // format.
  std::string training;
  std::string stop;
  std::string eval;

  // The JobSpec in text format.
  std::string Text() const;
};

}  // namespace testing_jobs
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_CLICKS_JOB_H_
