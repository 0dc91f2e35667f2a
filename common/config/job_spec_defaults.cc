#include "common/config/job_spec_defaults.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/config/metric_names.h"
#include "common/model/model_kind.h"

namespace pstrain {
namespace {

// Each value below is the one protos/job.proto documents beside its field.
constexpr char kDefaultJobName[] = "job";
constexpr JobMode kDefaultMode = JOB_MODE_TRAIN_AND_EVAL;

constexpr int64_t kDefaultMlpHiddenUnits[] = {256, 128};
constexpr int32_t kDefaultConv1Filters = 32;
constexpr int32_t kDefaultConv2Filters = 64;
constexpr int32_t kDefaultKernelSize = 5;
constexpr int64_t kDefaultDenseUnits = 128;
constexpr int32_t kDefaultEmbeddingDim = 16;
constexpr int32_t kDefaultAdmitAfter = 1;
constexpr int64_t kDefaultWideAndDeepHiddenUnits[] = {64, 32};
// DLRM's reference configuration for Criteo Kaggle: bottom 13-512-256-64-16
// (its last width the embedding dim), top 512-256-1.
constexpr int64_t kDefaultDlrmBottomHiddenUnits[] = {512, 256, 64};
constexpr int64_t kDefaultDlrmTopMlp[] = {512, 256, 1};

constexpr char kDefaultFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
constexpr char kDefaultCsvDelimiter[] = ",";
constexpr int64_t kDefaultSyntheticExamples = 100000;
constexpr int32_t kDefaultSyntheticFields = 8;
constexpr int64_t kDefaultSyntheticVocabulary = 1000;
constexpr double kDefaultZipfExponent = 1.1;
constexpr int64_t kDefaultHashBuckets = int64_t{1} << 20;
constexpr int32_t kDefaultBatchSize = 128;
constexpr int32_t kDefaultPrefetchBatches = 2;
constexpr int64_t kDefaultStreamBlockRecords = 1024;
constexpr int32_t kDefaultShuffleWindowBlocks = 8;

constexpr float kDefaultLearningRate = 0.01f;
constexpr float kDefaultMomentum = 0.9f;
constexpr float kDefaultAdagradInitialAccumulator = 0.1f;
constexpr float kDefaultAdagradEpsilon = 1e-7f;
constexpr float kDefaultAdamBeta1 = 0.9f;
constexpr float kDefaultAdamBeta2 = 0.999f;
constexpr float kDefaultAdamEpsilon = 1e-8f;
constexpr float kDefaultFtrlLearningRatePower = -0.5f;
constexpr float kDefaultFtrlInitialAccumulator = 0.1f;
constexpr float kDefaultStepDecayFactor = 0.1f;
constexpr float kDefaultExponentialDecayRate = 0.96f;

constexpr UpdateMode kDefaultUpdateMode = UPDATE_MODE_ASYNC;
constexpr int32_t kDefaultStalenessBound = 4;
constexpr int32_t kDefaultStepsPerLoop = 100;
constexpr int32_t kDefaultComputeThreads = 1;

constexpr bool kDefaultStopOnNanLoss = true;

constexpr double kDefaultCheckpointEverySeconds = 600;
constexpr int32_t kDefaultMaxToKeep = 5;
constexpr int32_t kDefaultMaxConsecutiveCheckpointFailures = 3;

constexpr double kDefaultThrottleSecs = 10;
constexpr int32_t kDefaultTopK = 5;
constexpr char kDefaultBestMetric[] = "loss";

constexpr int32_t kDefaultExportsToKeep = 3;
constexpr char kExportSubdir[] = "export";

template <typename T, size_t N>
void FillRepeatedIfEmpty(google::protobuf::RepeatedField<T>* field, const T (&values)[N]) {
  if (!field->empty()) return;
  for (T value : values) field->Add(value);
}

void FillEmbedding(EmbeddingSpec* embedding) {
  if (embedding->dim() == 0) embedding->set_dim(kDefaultEmbeddingDim);
  if (embedding->combiner() == COMBINER_UNSPECIFIED) embedding->set_combiner(COMBINER_SUM);
  embedding->set_admit_after(AdmitAfterOf(*embedding));
}

}  // namespace

void FillModelDefaults(ModelSpec* model) {
  switch (model->kind_case()) {
    case ModelSpec::kMlp: {
      MlpSpec* mlp = model->mutable_mlp();
      FillRepeatedIfEmpty(mlp->mutable_hidden_units(), kDefaultMlpHiddenUnits);
      if (mlp->activation() == ACTIVATION_UNSPECIFIED) mlp->set_activation(ACTIVATION_RELU);
      break;
    }
    case ModelSpec::kCnn: {
      CnnSpec* cnn = model->mutable_cnn();
      if (cnn->conv1_filters() == 0) cnn->set_conv1_filters(kDefaultConv1Filters);
      if (cnn->conv2_filters() == 0) cnn->set_conv2_filters(kDefaultConv2Filters);
      if (cnn->kernel_size() == 0) cnn->set_kernel_size(kDefaultKernelSize);
      if (cnn->dense_units() == 0) cnn->set_dense_units(kDefaultDenseUnits);
      break;
    }
    case ModelSpec::kWideAndDeep: {
      WideAndDeepSpec* wide_and_deep = model->mutable_wide_and_deep();
      FillEmbedding(wide_and_deep->mutable_embedding());
      FillRepeatedIfEmpty(wide_and_deep->mutable_hidden_units(), kDefaultWideAndDeepHiddenUnits);
      if (wide_and_deep->activation() == ACTIVATION_UNSPECIFIED) {
        wide_and_deep->set_activation(ACTIVATION_RELU);
      }
      break;
    }
    case ModelSpec::kDlrm: {
      DlrmSpec* dlrm = model->mutable_dlrm();
      FillEmbedding(dlrm->mutable_embedding());
      if (dlrm->bottom_mlp().empty()) {
        FillRepeatedIfEmpty(dlrm->mutable_bottom_mlp(), kDefaultDlrmBottomHiddenUnits);
        dlrm->add_bottom_mlp(dlrm->embedding().dim());
      }
      FillRepeatedIfEmpty(dlrm->mutable_top_mlp(), kDefaultDlrmTopMlp);
      break;
    }
    default:  // the other kinds have no defaults beyond zero
      break;
  }
}

void FillSyntheticClicksDefaults(SyntheticClicksSource* source) {
  if (source->num_examples() == 0) source->set_num_examples(kDefaultSyntheticExamples);
  if (source->num_fields() == 0) source->set_num_fields(kDefaultSyntheticFields);
  if (source->vocabulary_per_field() == 0) {
    source->set_vocabulary_per_field(kDefaultSyntheticVocabulary);
  }
  if (source->zipf_exponent() == 0) source->set_zipf_exponent(kDefaultZipfExponent);
}

void FillDataDefaults(DataSpec* data, PassMode mode) {
  switch (data->source_case()) {
    case DataSpec::kFashionMnist: {
      FashionMnistSource* source = data->mutable_fashion_mnist();
      if (source->dir().empty()) source->set_dir(kDefaultFashionMnistDir);
      source->set_split(SplitOf(source->split(), mode));
      break;
    }
    case DataSpec::kCsv: {
      CsvSource* csv = data->mutable_csv();
      if (csv->delimiter().empty()) csv->set_delimiter(kDefaultCsvDelimiter);
      csv->set_hash_buckets(HashBucketsOf(*csv));
      if (NamesCsvColumns(*csv)) csv->set_has_header(true);
      break;
    }
    case DataSpec::kSyntheticClicks:
      FillSyntheticClicksDefaults(data->mutable_synthetic_clicks());
      break;
    case DataSpec::kCriteo:
      data->mutable_criteo()->set_hash_buckets(HashBucketsOf(data->criteo()));
      break;
    case DataSpec::kTfrecord:
      data->mutable_tfrecord()->set_hash_buckets(HashBucketsOf(data->tfrecord()));
      data->set_stream_block_records(StreamBlockRecordsOf(*data));
      data->set_shuffle_window_blocks(ShuffleWindowBlocksOf(*data));
      break;
    default:  // libsvm's defaults are zeros; no source is refused later
      break;
  }
  data->set_batch_size(BatchSizeOf(*data));
  data->set_shuffle(ShuffleOf(*data, mode));
  data->set_prefetch_batches(PrefetchBatchesOf(*data));
}

void FillOptimizerDefaults(OptimizerSpec* optimizer) {
  switch (optimizer->kind_case()) {
    case OptimizerSpec::KIND_NOT_SET:
      optimizer->mutable_sgd();
      break;
    case OptimizerSpec::kMomentum:
      if (!optimizer->momentum().has_momentum()) {
        optimizer->mutable_momentum()->set_momentum(kDefaultMomentum);
      }
      break;
    case OptimizerSpec::kAdagrad: {
      AdagradSpec* adagrad = optimizer->mutable_adagrad();
      if (!adagrad->has_initial_accumulator()) {
        adagrad->set_initial_accumulator(kDefaultAdagradInitialAccumulator);
      }
      if (!adagrad->has_epsilon()) adagrad->set_epsilon(kDefaultAdagradEpsilon);
      break;
    }
    case OptimizerSpec::kAdam: {
      AdamSpec* adam = optimizer->mutable_adam();
      if (!adam->has_beta1()) adam->set_beta1(kDefaultAdamBeta1);
      if (!adam->has_beta2()) adam->set_beta2(kDefaultAdamBeta2);
      if (!adam->has_epsilon()) adam->set_epsilon(kDefaultAdamEpsilon);
      break;
    }
    case OptimizerSpec::kFtrl: {
      FtrlSpec* ftrl = optimizer->mutable_ftrl();
      if (!ftrl->has_learning_rate_power()) {
        ftrl->set_learning_rate_power(kDefaultFtrlLearningRatePower);
      }
      if (!ftrl->has_initial_accumulator()) {
        ftrl->set_initial_accumulator(kDefaultFtrlInitialAccumulator);
      }
      break;
    }
    default:  // sgd has no parameters
      break;
  }
  if (!optimizer->has_learning_rate()) optimizer->set_learning_rate(kDefaultLearningRate);

  if (!optimizer->has_schedule()) return;  // constant, no warm-up
  LearningRateSchedule* schedule = optimizer->mutable_schedule();
  switch (schedule->kind_case()) {
    case LearningRateSchedule::kStep:
      if (schedule->step().factor() == 0) {
        schedule->mutable_step()->set_factor(kDefaultStepDecayFactor);
      }
      break;
    case LearningRateSchedule::kExponential:
      if (schedule->exponential().rate() == 0) {
        schedule->mutable_exponential()->set_rate(kDefaultExponentialDecayRate);
      }
      break;
    default:  // cosine's alpha defaults to 0
      break;
  }
}

namespace {

void FillTraining(TrainingSpec* training) {
  training->set_update_mode(UpdateModeOf(*training));
  // The bound means nothing in the other modes; leaving it 0 there keeps the
  // filled spec honest about what applies.
  if (training->update_mode() == UPDATE_MODE_BOUNDED_STALENESS) {
    training->set_staleness_bound(StalenessBoundOf(*training));
  }
  training->set_steps_per_loop(StepsPerLoopOf(*training));
  training->set_compute_threads(ComputeThreadsOf(*training));
}

void FillCheckpoint(CheckpointSpec* checkpoint) {
  if (checkpoint->every_steps() == 0 && checkpoint->every_seconds() == 0) {
    checkpoint->set_every_seconds(kDefaultCheckpointEverySeconds);
  }
  checkpoint->set_max_to_keep(MaxToKeepOf(*checkpoint));
  checkpoint->set_max_consecutive_failures(MaxConsecutiveFailuresOf(*checkpoint));
}

void FillEval(const ModelSpec& model, EvalSpec* eval) {
  if (!eval->has_throttle_secs()) eval->set_throttle_secs(kDefaultThrottleSecs);
  if (eval->metrics().empty()) {
    eval->add_metrics("loss");
    // Whether a plug-in classifies is its own business: loss always exists.
    const ModelKind* kind = ModelKindOf(model.kind_case());
    const absl::string_view quality = kind == nullptr ? "" : kind->quality_metric(model);
    if (!quality.empty()) eval->add_metrics(std::string(quality));
  }
  if (eval->top_k() == 0) eval->set_top_k(kDefaultTopK);
  eval->set_best_metric(BestMetricOf(*eval));
  if (eval->best_direction() == METRIC_DIRECTION_UNSPECIFIED) {
    eval->set_best_direction(DefaultMetricDirection(eval->best_metric()));
  }
}

void FillExport(JobMode mode, const CheckpointSpec& checkpoint, ExportSpec* export_spec) {
  export_spec->set_strategy(ExportStrategyOf(*export_spec, mode));
  if (export_spec->export_dir().empty() && !checkpoint.model_dir().empty()) {
    absl::string_view model_dir = checkpoint.model_dir();
    while (model_dir.size() > 1 && absl::EndsWith(model_dir, "/")) model_dir.remove_suffix(1);
    export_spec->set_export_dir(
        absl::StrCat(model_dir, model_dir == "/" ? "" : "/", kExportSubdir));
  }
  export_spec->set_exports_to_keep(ExportsToKeepOf(*export_spec));
}

}  // namespace

int64_t HashBucketsOf(const TfRecordSource& source) {
  return source.hash_buckets() != 0 ? source.hash_buckets() : kDefaultHashBuckets;
}

int64_t HashBucketsOf(const CriteoSource& source) {
  return source.hash_buckets() != 0 ? source.hash_buckets() : kDefaultHashBuckets;
}

int64_t HashBucketsOf(const CsvSource& source) {
  return source.hash_buckets() != 0 ? source.hash_buckets() : kDefaultHashBuckets;
}

bool NamesCsvColumns(const CsvSource& source) {
  const bool names_fills = std::any_of(source.fill_missing().begin(), source.fill_missing().end(),
                                       [](const CsvFill& fill) { return fill.column() != "*"; });
  return !source.label().empty() || !source.features().empty() || !source.categorical().empty() ||
         !source.ignore().empty() || names_fills;
}

int32_t BatchSizeOf(const DataSpec& data) {
  return data.batch_size() != 0 ? data.batch_size() : kDefaultBatchSize;
}

bool ShuffleOf(const DataSpec& data, PassMode mode) {
  // Evaluation reads its set once in order; shuffling it only costs time.
  return data.has_shuffle() ? data.shuffle() : mode == PassMode::kTrain;
}

int32_t PrefetchBatchesOf(const DataSpec& data) {
  return data.prefetch_batches() != 0 ? data.prefetch_batches() : kDefaultPrefetchBatches;
}

int64_t StreamBlockRecordsOf(const DataSpec& data) {
  return data.stream_block_records() != 0 ? data.stream_block_records()
                                          : kDefaultStreamBlockRecords;
}

int32_t ShuffleWindowBlocksOf(const DataSpec& data) {
  return data.shuffle_window_blocks() != 0 ? data.shuffle_window_blocks()
                                           : kDefaultShuffleWindowBlocks;
}

DataSplit SplitOf(DataSplit split, PassMode mode) {
  if (split != DATA_SPLIT_UNSPECIFIED) return split;
  return mode == PassMode::kTrain ? DATA_SPLIT_TRAIN : DATA_SPLIT_TEST;
}

UpdateMode UpdateModeOf(const TrainingSpec& training) {
  return training.update_mode() != UPDATE_MODE_UNSPECIFIED ? training.update_mode()
                                                           : kDefaultUpdateMode;
}

DataType WireDataTypeOf(WireDtype wire) {
  return wire == WIRE_DTYPE_BFLOAT16 ? DATA_TYPE_BFLOAT16 : DATA_TYPE_FLOAT32;
}

int32_t StalenessBoundOf(const TrainingSpec& training) {
  return training.staleness_bound() != 0 ? training.staleness_bound() : kDefaultStalenessBound;
}

int32_t StepsPerLoopOf(const TrainingSpec& training) {
  return training.steps_per_loop() != 0 ? training.steps_per_loop() : kDefaultStepsPerLoop;
}

int32_t ComputeThreadsOf(const TrainingSpec& training) {
  return training.compute_threads() != 0 ? training.compute_threads() : kDefaultComputeThreads;
}

int32_t MaxToKeepOf(const CheckpointSpec& checkpoint) {
  return checkpoint.has_max_to_keep() ? checkpoint.max_to_keep() : kDefaultMaxToKeep;
}

int32_t MaxConsecutiveFailuresOf(const CheckpointSpec& checkpoint) {
  return checkpoint.has_max_consecutive_failures() ? checkpoint.max_consecutive_failures()
                                                   : kDefaultMaxConsecutiveCheckpointFailures;
}

int32_t AdmitAfterOf(const EmbeddingSpec& embedding) {
  return embedding.admit_after() != 0 ? embedding.admit_after() : kDefaultAdmitAfter;
}

bool StopOnNanLossOf(const StopSpec& stop) {
  return stop.has_stop_on_nan_loss() ? stop.stop_on_nan_loss() : kDefaultStopOnNanLoss;
}

int32_t ExportsToKeepOf(const ExportSpec& export_spec) {
  return export_spec.has_exports_to_keep() ? export_spec.exports_to_keep() : kDefaultExportsToKeep;
}

ExportStrategy ExportStrategyOf(const ExportSpec& export_spec, JobMode mode) {
  if (export_spec.strategy() != EXPORT_STRATEGY_UNSPECIFIED) return export_spec.strategy();
  // Without evaluations no checkpoint can be "best"; export the last one.
  return mode == JOB_MODE_TRAIN ? EXPORT_STRATEGY_FINAL : EXPORT_STRATEGY_BEST;
}

std::string BestMetricOf(const EvalSpec& eval) {
  return eval.best_metric().empty() ? std::string(kDefaultBestMetric) : eval.best_metric();
}

MetricDirection BestDirectionOf(const EvalSpec& eval) {
  MetricDirection direction = eval.best_direction();
  if (direction == METRIC_DIRECTION_UNSPECIFIED) {
    direction = DefaultMetricDirection(BestMetricOf(eval));
  }
  return direction == METRIC_DIRECTION_MAXIMIZE ? METRIC_DIRECTION_MAXIMIZE
                                                : METRIC_DIRECTION_MINIMIZE;
}

bool MeetsTarget(MetricDirection direction, double value, double target) {
  return direction == METRIC_DIRECTION_MAXIMIZE ? value >= target : value <= target;
}

void FillJobSpecDefaults(JobSpec* spec) {
  if (spec->name().empty()) spec->set_name(kDefaultJobName);
  if (spec->mode() == JOB_MODE_UNSPECIFIED) spec->set_mode(kDefaultMode);
  if (spec->has_model()) FillModelDefaults(spec->mutable_model());
  if (spec->has_train_data()) FillDataDefaults(spec->mutable_train_data(), PassMode::kTrain);
  if (spec->has_eval_data()) FillDataDefaults(spec->mutable_eval_data(), PassMode::kEval);
  FillOptimizerDefaults(spec->mutable_optimizer());
  FillTraining(spec->mutable_training());
  StopSpec* stop = spec->mutable_stop();
  stop->set_stop_on_nan_loss(StopOnNanLossOf(*stop));
  FillCheckpoint(spec->mutable_checkpoint());
  FillEval(spec->model(), spec->mutable_eval());
  FillExport(spec->mode(), spec->checkpoint(), spec->mutable_export_());
}

}  // namespace pstrain
