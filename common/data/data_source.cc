#include "common/data/data_source.h"

#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_validation.h"
#include "common/data/criteo_reader.h"
#include "common/data/csv_reader.h"
#include "common/data/fashion_mnist.h"
#include "common/data/file_patterns.h"
#include "common/data/libsvm_reader.h"
#include "common/data/streamed_source.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_format.h"
#include "common/data/tfrecord_reader.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

namespace {

// READ_MODE_AUTO streams files that hold more than this in all.
constexpr int64_t kStreamAboveBytes = int64_t{1} << 30;
constexpr int64_t kGzipRatioGuess = 4;

bool IsTestSplit(DataSplit split, PassMode mode) { return SplitOf(split, mode) == DATA_SPLIT_TEST; }

// The files' Env, for sources that read as they go and so must keep it.
Env& FileEnv() {
  static PosixEnv* const env = new PosixEnv;  // stateless; never destroyed
  return *env;
}

absl::StatusOr<std::unique_ptr<ExampleSource>> OpenStreamed(
    const DataSpec& spec, std::unique_ptr<const RecordFormat> format) {
  StreamingOptions options;
  options.block_records = StreamBlockRecordsOf(spec);
  options.window_blocks = ShuffleWindowBlocksOf(spec);
  ASSIGN_OR_RETURN(std::unique_ptr<StreamedSource> source,
                   StreamedSource::Open(FileEnv(), std::move(format), options));
  LOG(INFO) << source->format().name() << ": streaming " << source->num_examples() << " records in "
            << source->block_layout()->num_blocks() << " blocks of up to " << options.block_records
            << ", shuffled in windows of " << options.window_blocks << " blocks";
  return std::unique_ptr<ExampleSource>(std::move(source));
}

absl::StatusOr<std::unique_ptr<ExampleSource>> InMemory(
    absl::StatusOr<std::unique_ptr<InMemorySource>> loaded) {
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<ExampleSource>(*std::move(loaded));
}

}  // namespace

std::unique_ptr<const RecordFormat> StreamableFormatOf(const DataSpec& spec) {
  switch (spec.source_case()) {
    case DataSpec::kTfrecord:
      return TfRecordFormat(spec.tfrecord());
    case DataSpec::kCriteo:
      return CriteoRecordFormat(spec.criteo());
    case DataSpec::kCsv:
      return CsvRecordFormat(spec.csv());
    case DataSpec::kLibsvm:
      return LibsvmRecordFormat(spec.libsvm());
    default:
      return nullptr;
  }
}

absl::StatusOr<std::unique_ptr<ExampleSource>> OpenExampleSource(const DataSpec& raw,
                                                                 PassMode mode) {
  DataSpec spec = raw;
  FillDataDefaults(&spec, mode);
  RETURN_IF_ERROR(ValidateDataSpec(mode == PassMode::kEval ? "eval_data" : "train_data", spec));
  ASSIGN_OR_RETURN(const bool streamed, IsStreamed(spec));
  if (streamed && spec.csv().standardize()) {
    return absl::InvalidArgumentError(
        "csv.standardize needs the data in memory (its statistics take a pass over all of it), "
        "but the files hold more than 1 GiB, which is streamed: standardise the files "
        "beforehand, or set read_mode: READ_MODE_IN_MEMORY if memory allows");
  }
  if (streamed) return OpenStreamed(spec, StreamableFormatOf(spec));
  switch (spec.source_case()) {
    case DataSpec::kFashionMnist: {
      const FashionMnistSource& source = spec.fashion_mnist();
      return InMemory(LoadFashionMnist(source.dir(), IsTestSplit(source.split(), mode)));
    }
    case DataSpec::kCsv:
      return InMemory(LoadCsv(spec.csv()));
    case DataSpec::kLibsvm:
      return InMemory(LoadLibsvm(spec.libsvm()));
    case DataSpec::kSyntheticClicks: {
      absl::StatusOr<std::unique_ptr<SyntheticClicks>> clicks =
          SyntheticClicks::Create(spec.synthetic_clicks(),
                                  IsTestSplit(spec.synthetic_clicks().split(), mode));
      if (!clicks.ok()) return clicks.status();
      return std::unique_ptr<ExampleSource>(std::move(clicks).value());
    }
    case DataSpec::kTfrecord: {
      ASSIGN_OR_RETURN(std::unique_ptr<InMemorySource> loaded,
                       LoadTfRecord(FileEnv(), spec.tfrecord()));
      LOG(INFO) << "tfrecord: holding " << loaded->num_examples() << " records in memory";
      return std::unique_ptr<ExampleSource>(std::move(loaded));
    }
    case DataSpec::kCriteo:
      return InMemory(LoadCriteo(spec.criteo()));
    case DataSpec::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("the data spec names no source");
}

absl::StatusOr<bool> IsStreamed(const DataSpec& spec) {
  const std::unique_ptr<const RecordFormat> format = StreamableFormatOf(spec);
  if (format == nullptr) return false;
  switch (spec.read_mode()) {
    case DataSpec::READ_MODE_STREAMED:
      return true;
    case DataSpec::READ_MODE_IN_MEMORY:
      return false;
    default:
      break;
  }
  Env& env = FileEnv();
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandFilePatterns(format->patterns()));
  int64_t bytes = 0;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const FileInfo info, env.Stat(file));
    ASSIGN_OR_RETURN(const bool gzip, format->IsGzipped(env, file));
    // What a gzipped file inflates to is not known without inflating it;
    // text and records compress about fourfold.
    bytes += gzip ? kGzipRatioGuess * info.size : info.size;
  }
  return bytes > kStreamAboveBytes;
}

BatchReaderOptions BatchReaderOptionsFromSpec(const DataSpec& spec, PassMode mode) {
  BatchReaderOptions options;
  options.batch_size = BatchSizeOf(spec);
  options.shuffle = ShuffleOf(spec, mode);
  options.seed = spec.shuffle_seed();
  options.epochs = spec.epochs();
  options.prefetch_batches = PrefetchBatchesOf(spec);
  return options;
}

}  // namespace pstrain
