#ifndef PSTRAIN_COMMON_EXPORT_TESTING_TRAINED_MODEL_H_
#define PSTRAIN_COMMON_EXPORT_TESTING_TRAINED_MODEL_H_

// For export tests: a model trained in one process for a few steps, its
// weights copied into ModelParameters as a checkpoint would give them, and
// the ExportSource an export of it records.

#include <cstdint>
#include <memory>
#include <string>

#include "common/checkpoint/env.h"
#include "common/export/export_writer.h"
#include "common/export/model_parameters.h"
#include "common/training/local_trainer.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace testing_util {

struct TrainedModel {
  std::unique_ptr<LocalTrainer> trainer;
  std::unique_ptr<ModelParameters> parameters;
};

// Trains `spec` (defaults filled) for `steps` steps and copies out every
// dense variable and every embedding row training stored (ids below the
// table's vocabulary, or below the data's sparse_dim for a dynamic table).
// Fails the test on an error.
TrainedModel TrainModel(const JobSpec& spec, int64_t steps);

// A fresh, empty folder for the running test, named after it.
// (common/checkpoint/test_checkpoints.h has one, but its header brings
// protos/checkpoint.pb.h, whose RecordRange clashes with
// common/data/batch_reader.h's.)
std::string NewTestDir(Env& env);

// The ExportSource of `trained` at `step`, of job "job-1".
ExportSource ExportSourceOf(const TrainedModel& trained, const JobSpec& spec, int64_t step);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_TESTING_TRAINED_MODEL_H_
