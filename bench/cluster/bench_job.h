#ifndef PSTRAIN_BENCH_CLUSTER_BENCH_JOB_H_
#define PSTRAIN_BENCH_CLUSTER_BENCH_JOB_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain {
namespace bench {

// What a benchmark job trains: an MLP on Fashion-MNIST with Adam at 0.001,
// batch 128, shuffled; the same spec feeds the cluster and the
// single-process trainer, so both run the same model.
struct BenchJob {
  std::string name = "bench";
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  // Not empty: the training data is this TFRecord file of Fashion-MNIST
  // (as `pstrain write-tfrecord` writes it), streamed (READ_MODE_STREAMED)
  // instead of read from data_dir.
  std::string train_tfrecord;
  // Must lie under the cluster's checkpoint root, and be new: an existing
  // model_dir is resumed from.
  std::string model_dir;
  std::vector<int64_t> hidden_units = {256, 128};
  bool sync = false;  // sync rounds; else async
  // Sync only: gradients per round (training.replicas_to_aggregate); the
  // workers beyond it are backups. 0: every worker.
  int replicas_to_aggregate = 0;
  // training.compute_threads; 0: the default (one).
  int compute_threads = 0;
  // > 0: the learning rate follows a cosine down to a tenth over this many
  // steps, as in examples/fashion_mnist_mlp.pbtxt; 0: constant.
  int64_t cosine_decay_steps = 0;
  // A throughput job runs until stopped; this is only its safety net.
  int64_t max_steps = 1000000;
  // > 0: JOB_MODE_TRAIN_AND_EVAL on the test split, checkpoints every
  // `checkpoint_every_steps`, evaluations unthrottled, stopping once test
  // accuracy reaches `target_accuracy`. 0: JOB_MODE_TRAIN, one checkpoint
  // an hour (none within a benchmark window).
  double target_accuracy = 0;
  int64_t checkpoint_every_steps = 200;
  // With target_accuracy: the job stops once it is reached; false: it runs
  // to max_steps, evaluated all along (the final accuracy of a fixed run).
  bool stop_at_target = true;
  // TrainingSpec.wire's fields in text format ("gradients:
  // WIRE_DTYPE_BFLOAT16"); empty: float32.
  std::string wire;
  // training.seed (variable initialisation).
  uint64_t seed = 0;
};

// The job as a text-format JobSpec.
std::string BenchJobSpecText(const BenchJob& job);

// Weights and biases of an MLP 784-hidden...-10.
int64_t MlpParameters(const std::vector<int64_t>& hidden_units);

// Two equal hidden widths giving the MLP about `parameters` parameters.
std::vector<int64_t> HiddenUnitsForParameters(int64_t parameters);

// "784-256-128-10".
std::string MlpShape(const std::vector<int64_t>& hidden_units);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_BENCH_JOB_H_
