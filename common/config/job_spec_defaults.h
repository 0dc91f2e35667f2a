#ifndef PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_
#define PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_

#include "protos/job.pb.h"

namespace pstrain {

// Fills in every default documented in protos/job.proto, only where a field
// is unset: an `optional` field without presence, a plain field holding its
// zero value, an enum at its UNSPECIFIED value. A value the user set stays,
// even an invalid one, so that ValidateJobSpec can refuse it by name.
// Idempotent.
//
// Sub-messages with defaults (optimizer, training, stop, checkpoint, eval,
// export) are created when absent. train_data and eval_data are filled only
// when present, since a mode that does not use one leaves it out; the oneof
// choices (model kind, data source) are never made for the user, except the
// optimizer, which is sgd when unset.
//
// Defaults that depend on other fields:
//   train_data.shuffle true, eval_data.shuffle false;
//   fashion_mnist.split TRAIN in train_data, TEST in eval_data;
//   eval.metrics [loss, mse] for linear regression, [loss] for a plug-in
//     model, [loss, accuracy] for every other (classifier) model;
//   eval.best_direction from eval.best_metric: MINIMIZE for loss and mse,
//     MAXIMIZE otherwise;
//   checkpoint.every_seconds 600 when neither every_steps nor every_seconds
//     is set;
//   training.staleness_bound 4 only with update_mode BOUNDED_STALENESS;
//   export.strategy BEST, or FINAL in TRAIN mode, which has no evaluation to
//     rank checkpoints by;
//   export.export_dir <model_dir>/export when model_dir is set.
void FillJobSpecDefaults(JobSpec* spec);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_
