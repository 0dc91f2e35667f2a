#include "common/data/data_source.h"

#include <string>

#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/csv_reader.h"
#include "common/data/fashion_mnist.h"
#include "common/data/libsvm_reader.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_reader.h"

namespace pstrain {

namespace {

bool IsTestSplit(DataSplit split, bool is_eval) {
  return SplitOf(split, /*training=*/!is_eval) == DATA_SPLIT_TEST;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ExampleSource>> OpenExampleSource(const DataSpec& spec,
                                                                 bool is_eval) {
  switch (spec.source_case()) {
    case DataSpec::kFashionMnist: {
      const FashionMnistSource& source = spec.fashion_mnist();
      const std::string dir =
          source.dir().empty() ? std::string(kDefaultFashionMnistDir) : source.dir();
      absl::StatusOr<std::unique_ptr<InMemorySource>> loaded =
          LoadFashionMnist(dir, IsTestSplit(source.split(), is_eval));
      if (!loaded.ok()) return loaded.status();
      return std::unique_ptr<ExampleSource>(std::move(loaded).value());
    }
    case DataSpec::kCsv: {
      absl::StatusOr<std::unique_ptr<InMemorySource>> loaded = LoadCsv(spec.csv());
      if (!loaded.ok()) return loaded.status();
      return std::unique_ptr<ExampleSource>(std::move(loaded).value());
    }
    case DataSpec::kLibsvm: {
      absl::StatusOr<std::unique_ptr<InMemorySource>> loaded = LoadLibsvm(spec.libsvm());
      if (!loaded.ok()) return loaded.status();
      return std::unique_ptr<ExampleSource>(std::move(loaded).value());
    }
    case DataSpec::kSyntheticClicks: {
      absl::StatusOr<std::unique_ptr<SyntheticClicks>> clicks =
          SyntheticClicks::Create(spec.synthetic_clicks(),
                                  IsTestSplit(spec.synthetic_clicks().split(), is_eval));
      if (!clicks.ok()) return clicks.status();
      return std::unique_ptr<ExampleSource>(std::move(clicks).value());
    }
    case DataSpec::kTfrecord: {
      PosixEnv env;
      absl::StatusOr<std::unique_ptr<InMemorySource>> loaded = LoadTfRecord(env, spec.tfrecord());
      if (!loaded.ok()) return loaded.status();
      return std::unique_ptr<ExampleSource>(std::move(loaded).value());
    }
    case DataSpec::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("the data spec names no source");
}

BatchReaderOptions BatchReaderOptionsFromSpec(const DataSpec& spec, bool is_eval) {
  BatchReaderOptions options;
  options.batch_size = BatchSizeOf(spec);
  options.shuffle = ShuffleOf(spec, /*training=*/!is_eval);
  options.seed = spec.shuffle_seed();
  options.epochs = spec.epochs();
  options.prefetch_batches = PrefetchBatchesOf(spec);
  return options;
}

}  // namespace pstrain
