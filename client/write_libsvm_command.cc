#include "client/write_libsvm_command.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/exit_code.h"
#include "client/job_spec_file.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/data_source.h"
#include "common/data/libsvm_writer.h"
#include "gflags/gflags.h"

DEFINE_string(libsvm_dir, "",
              "write-libsvm: the folder to write train.libsvm and eval.libsvm to (created if "
              "missing)");
DEFINE_bool(libsvm_gzip, false, "write-libsvm: gzip the files (train.libsvm.gz, ...)");

namespace pstrain {

int RunWriteLibsvmCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain write-libsvm: expected one argument, the job spec file; got "
              << args.size() << " (see pstrain write-libsvm --help)\n";
    return kExitUsage;
  }
  if (FLAGS_libsvm_dir.empty()) {
    std::cerr << "pstrain write-libsvm: --libsvm_dir is required: the folder to write to\n";
    return kExitUsage;
  }
  absl::StatusOr<JobSpec> spec = LoadPreparedJobSpec(args[0]);
  if (!spec.ok()) {
    std::cerr << "pstrain write-libsvm: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  // Both sets (a valid spec has one at least) are opened, so validated,
  // before anything is written.
  struct Set {
    const char* name;
    std::unique_ptr<ExampleSource> source;
  };
  std::vector<Set> sets;
  for (const PassMode mode : {PassMode::kTrain, PassMode::kEval}) {
    const bool eval = mode == PassMode::kEval;
    const char* name = eval ? "eval" : "train";
    if (!(eval ? spec->has_eval_data() : spec->has_train_data())) continue;
    absl::StatusOr<std::unique_ptr<ExampleSource>> source =
        OpenExampleSource(eval ? spec->eval_data() : spec->train_data(), mode);
    if (!source.ok()) {
      std::cerr << "pstrain write-libsvm: " << name << "_data: " << source.status().message()
                << "\n";
      return kExitUsage;
    }
    sets.push_back({name, *std::move(source)});
  }
  // One width for both files: a file's largest index need not reach its
  // data's width, and the model is sized by the training data's.
  int64_t num_features = 0;
  for (const Set& set : sets) {
    num_features = std::max(num_features, LibsvmFeatureCount(set.source->info()));
  }
  PosixEnv env;
  if (absl::Status created = CreateDirs(env, FLAGS_libsvm_dir); !created.ok()) {
    std::cerr << "pstrain write-libsvm: --libsvm_dir cannot be created: " << created.message()
              << "\n";
    return 1;
  }
  LibsvmWriteOptions options;
  options.gzip = FLAGS_libsvm_gzip;
  for (const Set& set : sets) {
    const std::string path =
        JoinPath(FLAGS_libsvm_dir, absl::StrCat(set.name, ".libsvm", options.gzip ? ".gz" : ""));
    if (absl::Status written = WriteLibsvmFile(env, path, *set.source, options); !written.ok()) {
      std::cerr << "pstrain write-libsvm: " << written.message() << "\n";
      return 1;
    }
    absl::StatusOr<FileInfo> info = env.Stat(path);
    std::cerr << absl::StrFormat("wrote %d examples to %s (%.1f MB)\n", set.source->num_examples(),
                                 path, info.ok() ? info->size / 1e6 : 0.0);
    std::cout << set.name << "_data { libsvm { path: \"" << path
              << "\" num_features: " << num_features << " } }\n";
  }
  return 0;
}

Subcommand WriteLibsvmCommand() {
  return {"write-libsvm",
          "JOB.pbtxt --libsvm_dir=DIR",
          "write a job's data as libsvm text",
          "Reads the job's train_data and eval_data as the job would and writes them,\n"
          "example by example in order, as libsvm / svmlight text: DIR/train.libsvm and\n"
          "DIR/eval.libsvm (.gz with --libsvm_gzip). Each line is \"label index:value ...\",\n"
          "indices 1-based and ascending: the dense features first (indices 1 to their\n"
          "count, zeros left out), then the sparse ids after them (a categorical id as\n"
          "value 1). Prints the data specs that read the files back (stdout; progress on\n"
          "stderr), with num_features set so that both files read as equally wide: put\n"
          "them in a job spec in place of the data it had. Synthetic click logs written\n"
          "this way keep their ids, so their true model still says what training can\n"
          "reach.\n"
          "\n"
          "Exit codes: 0 written; 1 a file could not be written; 2 bad usage, an invalid\n"
          "spec, or data that cannot be read.\n"
          "\n"
          "Example:\n"
          "  pstrain write-libsvm examples/clicks_pytorch_embedding.pbtxt "
          "--libsvm_dir=/tmp/pstrain-data/clicks",
          {"libsvm_dir", "libsvm_gzip"},
          RunWriteLibsvmCommand};
}

}  // namespace pstrain
