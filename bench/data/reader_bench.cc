// Throughput of each data reader on one thread, beside raw sequential
// reading of the same file's bytes in the same run: how much a reader costs
// over the disk (here the page cache) it reads from.
//
//   bazel run -c opt //bench/data:reader_bench -- [--dir=/tmp/pstrain-reader-bench]
//       [--repeats=3] [--report=FILE]
//
// The files: Fashion-MNIST's 60,000 training images as the gzipped IDX
// files Debian installs, as TFRecord of tf.Example (plain and gzipped, as
// `pstrain write-tfrecord` writes them) and as CSV; 200,000 synthetic click
// logs of 8 fields as libsvm and as TFRecord; 200,000 Criteo-format lines.
// Each reader loads its file whole; the streamed rows build a file's index,
// or read a shuffled epoch through it.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/report/markdown_report.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/batch_reader.h"
#include "common/data/criteo_logs.h"
#include "common/data/criteo_reader.h"
#include "common/data/csv_reader.h"
#include "common/data/data_source.h"
#include "common/data/fashion_mnist.h"
#include "common/data/file_patterns.h"
#include "common/data/libsvm_reader.h"
#include "common/data/streamed_source.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_reader.h"
#include "common/data/tfrecord_writer.h"
#include "common/process/allocator_tuning.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

DEFINE_string(dir, "/tmp/pstrain-reader-bench", "where the benchmark writes its files");
DEFINE_int32(repeats, 3, "loads per reader; the median is reported");
DEFINE_string(report, "", "write this run's section of bench/RESULTS.md here");
DEFINE_string(only, "", "measure only the readers whose name contains this (for profiling)");
DEFINE_string(fashion_mnist_dir, "/usr/share/datasets/fashion-mnist",
              "Debian's dataset-fashion-mnist files");

namespace pstrain {
namespace {

constexpr int64_t kClickExamples = 200000;
// Lines of the Criteo-format logs (about 50 MB).
constexpr int64_t kCriteoExamples = 200000;

double Seconds(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double MedianSeconds(const std::function<void()>& fn) {
  std::vector<double> times;
  for (int r = 0; r < FLAGS_repeats; ++r) times.push_back(Seconds(fn));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int64_t FileBytes(const std::string& path) {
  return static_cast<int64_t>(std::filesystem::file_size(path));
}

// Reads `path` start to end in 1 MiB reads and drops the bytes.
void ReadRaw(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  CHECK_GE(fd, 0) << path;
  std::vector<char> buffer(1 << 20);
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
  ::close(fd);
}

std::unique_ptr<ExampleSource> Open(const DataSpec& spec) {
  absl::StatusOr<std::unique_ptr<ExampleSource>> source = OpenExampleSource(spec, PassMode::kTrain);
  CHECK(source.ok()) << source.status();
  return std::move(source).value();
}

// Every example of `source`, in order.
ExampleBatch AllExamples(const ExampleSource& source) {
  std::vector<int64_t> all(source.num_examples());
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  CHECK(source.Fill(all, &batch).ok());
  return batch;
}

void WriteCsv(const ExampleSource& source, const std::string& path) {
  const ExampleBatch batch = AllExamples(source);
  std::ofstream out(path);
  const int64_t dim = batch.dense_dim();
  for (int64_t i = 0; i < batch.size; ++i) {
    out << batch.labels[i];
    for (int64_t d = 0; d < dim; ++d) out << ',' << batch.dense.data<float>()[i * dim + d];
    out << '\n';
  }
}

void WriteLibsvm(const ExampleSource& source, const std::string& path) {
  const ExampleBatch batch = AllExamples(source);
  std::ofstream out(path);
  for (int64_t i = 0; i < batch.size; ++i) {
    out << batch.labels[i];
    for (int64_t k = batch.row_splits[i]; k < batch.row_splits[i + 1]; ++k) {
      out << ' ' << batch.sparse_ids[k] + 1 << ":1";
    }
    out << '\n';
  }
}

// How many examples a reader loaded; it must load.
int64_t Loaded(const absl::StatusOr<std::unique_ptr<InMemorySource>>& loaded) {
  CHECK(loaded.ok()) << loaded.status();
  return (*loaded)->num_examples();
}

// The files `spec` names, streamed with the default options (saving the
// indexes when `save_indexes`).
std::unique_ptr<StreamedSource> OpenStreamed(Env& env, const DataSpec& spec, bool save_indexes) {
  StreamingOptions options;
  options.save_indexes = save_indexes;
  auto source = StreamedSource::Open(env, StreamableFormatOf(spec), options);
  CHECK(source.ok()) << source.status();
  return *std::move(source);
}

// Reads one shuffled epoch of the streamed files `spec` names, in batches
// of 128 as a trainer does (no prefetch thread: the decoding is timed);
// the examples read.
int64_t ShuffledEpoch(Env& env, const DataSpec& spec) {
  std::unique_ptr<StreamedSource> source = OpenStreamed(env, spec, /*save_indexes=*/true);
  BatchReaderOptions options;
  options.batch_size = 128;
  options.shuffle = true;
  options.prefetch_batches = 0;
  auto reader = BatchReader::Create(source.get(), options);
  CHECK(reader.ok()) << reader.status();
  int64_t examples = 0;
  while (true) {
    absl::StatusOr<ExampleBatch> batch = (*reader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    CHECK(batch.ok()) << batch.status();
    examples += batch->size;
    (*reader)->Recycle(*std::move(batch));
  }
  return examples;
}

struct Reader {
  std::string name;
  std::string file;               // what the raw read reads
  std::function<int64_t()> load;  // returns the examples loaded
};

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  using namespace pstrain;
  // As every pstrain process runs (the readers' blocks and batches are
  // reused, not returned to the kernel and faulted in again).
  TuneAllocatorForLargeBuffers();
  const std::string dir = FLAGS_dir;
  std::filesystem::create_directories(dir);
  PosixEnv env;

  DataSpec images_spec;
  images_spec.mutable_fashion_mnist()->set_dir(FLAGS_fashion_mnist_dir);
  images_spec.mutable_fashion_mnist()->set_split(DATA_SPLIT_TRAIN);
  const std::unique_ptr<ExampleSource> images = Open(images_spec);
  DataSpec clicks_spec;
  clicks_spec.mutable_synthetic_clicks()->set_num_examples(kClickExamples);
  clicks_spec.mutable_synthetic_clicks()->set_seed(1);
  const std::unique_ptr<ExampleSource> clicks = Open(clicks_spec);

  std::printf("writing the files under %s\n", dir.c_str());
  TfRecordWriteOptions gzip;
  gzip.gzip = true;
  CHECK(WriteTfRecordFile(env, dir + "/images.tfrecord", *images).ok());
  CHECK(WriteTfRecordFile(env, dir + "/images.tfrecord.gz", *images, gzip).ok());
  CHECK(WriteTfRecordFile(env, dir + "/clicks.tfrecord", *clicks).ok());
  WriteCsv(*images, dir + "/images.csv");
  WriteLibsvm(*clicks, dir + "/clicks.svm");
  CriteoLogsOptions criteo_logs;
  criteo_logs.num_examples = kCriteoExamples;
  CHECK(WriteCriteoLogs(env, dir + "/criteo.tsv", criteo_logs).ok());
  CHECK(WriteCriteoLogs(env, dir + "/criteo.tsv.gz", criteo_logs).ok());
  auto criteo = [](const std::string& file) {
    return [file]() {
      CriteoSource spec;
      spec.add_paths(file);
      return Loaded(LoadCriteo(spec));
    };
  };

  auto tfrecord_spec = [](const std::string& file, bool click_fields) {
    DataSpec data;
    TfRecordSource& spec = *data.mutable_tfrecord();
    spec.add_paths(file);
    if (click_fields) {
      for (int f = 0; f < 8; ++f) spec.add_sparse_features(absl::StrCat("field_", f));
    } else {
      spec.add_dense_features("dense");
    }
    spec.set_label("label");
    return data;
  };
  auto tfrecord = [&](const std::string& file, bool click_fields) {
    return [spec = tfrecord_spec(file, click_fields), &env]() {
      return Loaded(LoadTfRecord(env, spec.tfrecord()));
    };
  };
  DataSpec criteo_spec;
  criteo_spec.mutable_criteo()->add_paths(dir + "/criteo.tsv");
  DataSpec criteo_gzip_spec;
  criteo_gzip_spec.mutable_criteo()->add_paths(dir + "/criteo.tsv.gz");
  DataSpec libsvm_spec;
  libsvm_spec.mutable_libsvm()->set_path(dir + "/clicks.svm");
  // Streamed reading: building the index (a pass that decodes every record,
  // as the first read of a job does), and a shuffled epoch through the
  // index as the single-process trainer reads it.
  auto index_build = [&](const DataSpec& spec, const std::string& file) {
    return [spec, file, &env]() {
      std::filesystem::remove(RecordIndexPath(file));  // every repeat builds it
      return OpenStreamed(env, spec, /*save_indexes=*/false)->num_examples();
    };
  };
  auto streamed_epoch = [&](const DataSpec& spec) {
    OpenStreamed(env, spec, /*save_indexes=*/true);  // the epochs find the index
    return [spec, &env]() { return ShuffledEpoch(env, spec); };
  };
  const std::string idx = FLAGS_fashion_mnist_dir + "/train-images-idx3-ubyte.gz";
  std::vector<Reader> readers = {
      {"IDX, gzipped (Fashion-MNIST as installed)", idx,
       [&] { return Loaded(LoadFashionMnist(FLAGS_fashion_mnist_dir, /*test=*/false)); }},
      {"TFRecord of tf.Example, images", dir + "/images.tfrecord",
       tfrecord(dir + "/images.tfrecord", false)},
      {"TFRecord, images, streamed: building the index", dir + "/images.tfrecord",
       index_build(tfrecord_spec(dir + "/images.tfrecord", false), dir + "/images.tfrecord")},
      {"TFRecord, images, streamed: a shuffled epoch", dir + "/images.tfrecord",
       streamed_epoch(tfrecord_spec(dir + "/images.tfrecord", false))},
      {"TFRecord of tf.Example, images, gzipped", dir + "/images.tfrecord.gz",
       tfrecord(dir + "/images.tfrecord.gz", false)},
      {"CSV, images", dir + "/images.csv",
       [&] {
         CsvSource spec;
         spec.set_path(dir + "/images.csv");
         spec.set_delimiter(",");
         return Loaded(LoadCsv(spec));
       }},
      {"TFRecord of tf.Example, click logs", dir + "/clicks.tfrecord",
       tfrecord(dir + "/clicks.tfrecord", true)},
      {"TFRecord, click logs, streamed: a shuffled epoch", dir + "/clicks.tfrecord",
       streamed_epoch(tfrecord_spec(dir + "/clicks.tfrecord", true))},
      {"Criteo TSV (make-criteo-logs)", dir + "/criteo.tsv", criteo(dir + "/criteo.tsv")},
      {"Criteo TSV, streamed: building the index", dir + "/criteo.tsv",
       index_build(criteo_spec, dir + "/criteo.tsv")},
      {"Criteo TSV, streamed: a shuffled epoch", dir + "/criteo.tsv", streamed_epoch(criteo_spec)},
      {"Criteo TSV, gzipped", dir + "/criteo.tsv.gz", criteo(dir + "/criteo.tsv.gz")},
      {"Criteo TSV, gzipped, streamed: building the index", dir + "/criteo.tsv.gz",
       index_build(criteo_gzip_spec, dir + "/criteo.tsv.gz")},
      {"Criteo TSV, gzipped, streamed: a shuffled epoch", dir + "/criteo.tsv.gz",
       streamed_epoch(criteo_gzip_spec)},
      {"libsvm, click logs", dir + "/clicks.svm",
       [&] {
         LibsvmSource spec;
         spec.set_path(dir + "/clicks.svm");
         return Loaded(LoadLibsvm(spec));
       }},
      {"libsvm, click logs, streamed: a shuffled epoch", dir + "/clicks.svm",
       streamed_epoch(libsvm_spec)},
  };

  bench::MarkdownReport report("Data readers: one thread, beside raw reading of the same bytes");
  report.Paragraph(
      "Each reader loads its file whole on one thread (parsing, checksums, decompression); "
      "the streamed rows build a file's offset index (a pass that decodes every record, as a "
      "job's first read does) or read one shuffled epoch through it in batches of 128 (blocks "
      "of 1024 records, windows of 8 blocks), as the single-process trainer does (a gzipped "
      "file's blocks inflated from the access point before each); "
      "the reference reads the same file's bytes start to end in 1 MiB reads in the same run. "
      "Files are in the page cache (each is read once before timing), so the reference is "
      "memory speed, not a disk's: the ratio says how far a reader is from free. MB are of "
      "the file as stored (compressed for gzip). Medians of " +
      absl::StrCat(FLAGS_repeats) + " loads.");
  report.Command("bench/run_all.sh --only readers");
  std::vector<std::vector<std::string>> rows;
  std::printf("%-44s %9s %9s %12s %10s %10s %8s\n", "reader", "MB", "records", "records/s", "MB/s",
              "raw MB/s", "ratio");
  for (const Reader& reader : readers) {
    if (!absl::StrContains(reader.name, FLAGS_only)) continue;
    ReadRaw(reader.file);  // into the page cache
    const double mb = FileBytes(reader.file) / 1e6;
    const double raw_seconds = MedianSeconds([&] { ReadRaw(reader.file); });
    int64_t records = 0;
    const double seconds = MedianSeconds([&] { records = reader.load(); });
    const double ratio = raw_seconds / seconds;
    std::printf("%-44s %9.1f %9lld %12.0f %10.1f %10.0f %8.4f\n", reader.name.c_str(), mb,
                static_cast<long long>(records), records / seconds, mb / seconds, mb / raw_seconds,
                ratio);
    rows.push_back({reader.name, absl::StrFormat("%.1f", mb), absl::StrCat(records),
                    absl::StrFormat("%.0f", records / seconds),
                    absl::StrFormat("%.1f", mb / seconds),
                    absl::StrFormat("%.0f", mb / raw_seconds), absl::StrFormat("%.4f", ratio)});
  }
  report.Table(
      {"reader", "MB", "records", "records/s", "MB/s", "raw read MB/s", "reader / raw read"}, rows);
  const absl::Status written = report.WriteTo(FLAGS_report);
  if (!written.ok()) {
    std::fprintf(stderr, "reader_bench: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  return 0;
}
