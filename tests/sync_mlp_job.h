#ifndef PSTRAIN_TESTS_SYNC_MLP_JOB_H_
#define PSTRAIN_TESTS_SYNC_MLP_JOB_H_

// The job the bitwise-determinism tests run: an MLP 784-400-10 on
// Fashion-MNIST in sync mode with every worker in each round and fixed
// seeds, Adagrad. Its first layer's weights (1.25 MB) are the largest
// variable by far, so one shard holds most of a push.

#include <cstdint>
#include <string>

namespace pstrain {
namespace testing_jobs {

// The spec in text format, model_dir `name` (under the cluster's checkpoint
// root), ending at `max_steps` with a checkpoint every
// `checkpoint_every_steps`.
std::string SyncMlpJob(const std::string& name, int64_t max_steps, int64_t checkpoint_every_steps);

}  // namespace testing_jobs
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_SYNC_MLP_JOB_H_
