#ifndef PSTRAIN_BENCH_SIM_SIM_JOB_H_
#define PSTRAIN_BENCH_SIM_SIM_JOB_H_

#include <cstdint>
#include <string>

namespace pstrain {
namespace bench {

// The job simulated members train: wide-and-deep on synthetic click logs,
// async, with one hidden layer sized so that the dense variables hold about
// `dense_floats` values, and a dynamic embedding table of `dim` floats a row
// that sparse pushes update. The members compute nothing; the job is there
// so that the coordinator hands out real assignments and leases and the
// shards hold real variables. It runs until stopped.
struct SimJob {
  int64_t dense_floats = 1024;
  int dim = 16;
  int num_fields = 8;
  // Records in an epoch, enough for every member's leases in a run.
  int64_t num_examples = 100000000;
  int batch_size = 64;
  // Hidden layers of width 2 after the sized one: each adds two variables
  // (weights and biases) to the job, and so to every member's assignment,
  // the cost of a model of many variables at the coordinator. Default 0.
  int extra_layers = 0;
};

// The single hidden layer's width giving about `dense_floats` dense values
// (at least 1).
int64_t SimHiddenUnits(const SimJob& job);
// The dense values the job's variables hold with that width.
int64_t SimDenseFloats(const SimJob& job);

// The job as a text-format JobSpec.
std::string SimJobSpecText(const SimJob& job);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_JOB_H_
