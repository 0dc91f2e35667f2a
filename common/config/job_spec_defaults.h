#ifndef PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_
#define PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_

#include <cstdint>
#include <string>

#include "common/config/pass_mode.h"
#include "protos/job.pb.h"
#include "protos/tensor.pb.h"

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

// The parts of FillJobSpecDefaults, for code that builds a model, a data
// source or an optimizer from a part of a spec nobody may have filled (a
// parameter server answering CreateVariables, a library caller). The same
// rules as above; idempotent.
void FillModelDefaults(ModelSpec* model);
// `mode`: what the data is read for.
void FillDataDefaults(DataSpec* data, PassMode mode);
// An unset kind becomes sgd.
void FillOptimizerDefaults(OptimizerSpec* optimizer);
// The synthetic_clicks part of FillDataDefaults, for code that makes the
// generator itself (SyntheticClicks::Create takes a filled spec).
void FillSyntheticClicksDefaults(SyntheticClicksSource* source);

// A field's value, or the default FillJobSpecDefaults gives it when unset:
// for code that may be handed a spec nobody filled (a parameter server
// answering CreateVariables from any client, a spec built by a test). The
// fill uses these too, so each default is written once.
int32_t BatchSizeOf(const DataSpec& data);
// Unset: shuffled for training, read once in order for evaluation.
bool ShuffleOf(const DataSpec& data, PassMode mode);
int32_t PrefetchBatchesOf(const DataSpec& data);
int64_t HashBucketsOf(const TfRecordSource& source);
int64_t HashBucketsOf(const CriteoSource& source);
int64_t HashBucketsOf(const CsvSource& source);
// Whether a CSV source names any column by the header (which it then must
// have): its label, features, categorical or ignored columns, or a fill
// other than "*".
bool NamesCsvColumns(const CsvSource& source);
int64_t StreamBlockRecordsOf(const DataSpec& data);
int32_t ShuffleWindowBlocksOf(const DataSpec& data);
// UNSPECIFIED reads the split of the pass: train for training, test for
// evaluation.
DataSplit SplitOf(DataSplit split, PassMode mode);
UpdateMode UpdateModeOf(const TrainingSpec& training);
// The tensor dtype of a WireFormat field: float32 unless BFLOAT16.
DataType WireDataTypeOf(WireDtype wire);
// The bound of BOUNDED_STALENESS mode.
int32_t StalenessBoundOf(const TrainingSpec& training);
int32_t StepsPerLoopOf(const TrainingSpec& training);
int32_t ComputeThreadsOf(const TrainingSpec& training);
int32_t MaxToKeepOf(const CheckpointSpec& checkpoint);
int32_t MaxConsecutiveFailuresOf(const CheckpointSpec& checkpoint);
int32_t AdmitAfterOf(const EmbeddingSpec& embedding);
bool StopOnNanLossOf(const StopSpec& stop);
int32_t ExportsToKeepOf(const ExportSpec& export_spec);
// BEST, or FINAL in TRAIN mode, which has no evaluation to rank
// checkpoints by.
ExportStrategy ExportStrategyOf(const ExportSpec& export_spec, JobMode mode);
std::string BestMetricOf(const EvalSpec& eval);
// Which way the best metric improves: eval.best_direction, else the
// metric's default (DefaultMetricDirection); a metric without one is
// minimised, as a loss is. Never UNSPECIFIED.
MetricDirection BestDirectionOf(const EvalSpec& eval);
// Whether `value` of a metric improving in `direction` (BestDirectionOf)
// meets `target` (stop.target_metric_value): at or beyond it.
bool MeetsTarget(MetricDirection direction, double value, double target);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_SPEC_DEFAULTS_H_
