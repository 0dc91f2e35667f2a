#include "client/write_tfrecord_command.h"

#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/exit_code.h"
#include "client/job_spec_file.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/data_source.h"
#include "common/data/tfrecord_writer.h"
#include "gflags/gflags.h"
#include "google/protobuf/text_format.h"

DEFINE_string(tfrecord_dir, "",
              "write-tfrecord: the folder to write train.tfrecord and eval.tfrecord to "
              "(created if missing)");
DEFINE_bool(tfrecord_gzip, false, "write-tfrecord: gzip the files (train.tfrecord.gz, ...)");

namespace pstrain {
namespace {

// The source that reads back what WriteTfRecordFile wrote of data like
// `info`'s, with its default feature names.
TfRecordSource SourceReading(const std::string& path, const DatasetInfo& info) {
  const TfRecordWriteOptions names;
  TfRecordSource source;
  source.add_paths(path);
  if (info.dense_dim > 0) source.add_dense_features(names.dense_feature);
  if (info.sparse_dim > 0 && info.num_fields > 0) {
    for (int f = 0; f < info.num_fields; ++f) {
      source.add_sparse_features(absl::StrCat(names.field_prefix, f));
    }
  } else if (info.sparse_dim > 0) {
    source.add_sparse_features(names.ids_feature);
  }
  source.set_label(names.label_feature);
  return source;
}

std::string OneLine(const google::protobuf::Message& message) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintToString(message, &text);
  return text;
}

}  // namespace

int RunWriteTfRecordCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain write-tfrecord: expected one argument, the job spec file; got "
              << args.size() << " (see pstrain write-tfrecord --help)\n";
    return kExitUsage;
  }
  if (FLAGS_tfrecord_dir.empty()) {
    std::cerr << "pstrain write-tfrecord: --tfrecord_dir is required: the folder to write to\n";
    return kExitUsage;
  }
  absl::StatusOr<JobSpec> spec = LoadPreparedJobSpec(args[0]);
  if (!spec.ok()) {
    std::cerr << "pstrain write-tfrecord: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  PosixEnv env;
  if (absl::Status created = CreateDirs(env, FLAGS_tfrecord_dir); !created.ok()) {
    std::cerr << "pstrain write-tfrecord: --tfrecord_dir cannot be created: " << created.message()
              << "\n";
    return 1;
  }
  TfRecordWriteOptions options;
  options.gzip = FLAGS_tfrecord_gzip;
  const struct {
    const char* name;
    bool present;
    const DataSpec& data;
    PassMode mode;
  } sets[] = {{"train", spec->has_train_data(), spec->train_data(), PassMode::kTrain},
              {"eval", spec->has_eval_data(), spec->eval_data(), PassMode::kEval}};
  for (const auto& set : sets) {
    if (!set.present) continue;
    absl::StatusOr<std::unique_ptr<ExampleSource>> source = OpenExampleSource(set.data, set.mode);
    if (!source.ok()) {
      std::cerr << "pstrain write-tfrecord: " << set.name << "_data: " << source.status().message()
                << "\n";
      return kExitUsage;
    }
    const std::string path = JoinPath(
        FLAGS_tfrecord_dir, absl::StrCat(set.name, ".tfrecord", options.gzip ? ".gz" : ""));
    if (absl::Status written = WriteTfRecordFile(env, path, **source, options); !written.ok()) {
      std::cerr << "pstrain write-tfrecord: " << written.message() << "\n";
      return absl::IsInvalidArgument(written) ? kExitUsage : 1;
    }
    absl::StatusOr<FileInfo> info = env.Stat(path);
    std::cerr << absl::StrFormat("wrote %d examples to %s (%.1f MB)\n", (*source)->num_examples(),
                                 path, info.ok() ? info->size / 1e6 : 0.0);
    DataSpec reading;
    *reading.mutable_tfrecord() = SourceReading(path, (*source)->info());
    std::cout << set.name << "_data { " << OneLine(reading) << "}\n";
  }
  return 0;
}

Subcommand WriteTfRecordCommand() {
  return {"write-tfrecord",
          "JOB.pbtxt --tfrecord_dir=DIR",
          "write a job's data as TFRecord files of tf.Example",
          "Reads the job's train_data and eval_data as the job would and writes them,\n"
          "example by example in order, as TFRecord files of tf.Example, as TensorFlow\n"
          "writes them: DIR/train.tfrecord and DIR/eval.tfrecord (.gz with\n"
          "--tfrecord_gzip). Each record holds the dense features as one float_list\n"
          "\"dense\", the sparse ids as int64_lists (\"field_0\", \"field_1\", ... when the\n"
          "data has one id per field, else \"ids\") and the label as \"label\". Prints the\n"
          "data specs that read the files back (stdout; progress on stderr): put them in\n"
          "a job spec in place of the data it had. Categorical values are hashed into\n"
          "hash_buckets when read, so read back as ids they differ from the originals;\n"
          "data whose ids carry values (libsvm index:value) is refused.\n"
          "\n"
          "Exit codes: 0 written; 1 a file could not be written; 2 bad usage, an invalid\n"
          "spec, or data that cannot be read or written as tf.Example.\n"
          "\n"
          "Example:\n"
          "  pstrain write-tfrecord examples/fashion_mnist_mlp.pbtxt "
          "--tfrecord_dir=/tmp/fmnist-tfrecord",
          {"tfrecord_dir", "tfrecord_gzip"},
          RunWriteTfRecordCommand};
}

}  // namespace pstrain
