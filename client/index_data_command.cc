#include "client/index_data_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/exit_code.h"
#include "client/job_spec_file.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/data_format.h"
#include "common/data/data_source.h"
#include "common/data/file_patterns.h"
#include "common/data/record_index.h"

namespace pstrain {
namespace {

// "csv, libsvm, tfrecord, criteo", as the formats declare it.
std::string StreamingFormats() {
  return absl::StrJoin(DataFormatNames([](const DataFormat& f) { return f.streams; }), ", ");
}

// Indexes the files of one data spec; false (having said why) on an error.
bool IndexData(Env& env, const char* name, const DataSpec& data) {
  const std::unique_ptr<const RecordFormat> format = StreamableFormatOf(data);
  if (format == nullptr) {
    std::cout << name << "_data: not read from files that stream (" << StreamingFormats()
              << "); nothing to index\n";
    return true;
  }
  absl::StatusOr<std::vector<std::string>> files = ExpandFilePatterns(format->patterns());
  if (!files.ok()) {
    std::cerr << "pstrain index-data: " << name << "_data: " << files.status().message() << "\n";
    return false;
  }
  RecordIndexOptions options;
  options.block_records = StreamBlockRecordsOf(data);
  for (const std::string& file : *files) {
    RecordIndexOutcome outcome;
    absl::StatusOr<RecordFileIndex> index =
        LoadOrBuildRecordIndex(env, file, *format, options, &outcome);
    if (!index.ok()) {
      std::cerr << "pstrain index-data: " << index.status().message() << "\n";
      return false;
    }
    if (!outcome.saved.ok()) {
      std::cerr << "pstrain index-data: cannot write " << RecordIndexPath(file) << ": "
                << outcome.saved.message() << "\n";
      return false;
    }
    if (options.dense_widths.empty()) {
      options.dense_widths.assign(index->dense_widths().begin(), index->dense_widths().end());
    }
    const std::string gzip =
        index->gzip_access_points_size() == 0
            ? ""
            : absl::StrFormat(", gzipped: %d access points over %d MB inflated",
                              index->gzip_access_points_size(), index->stream_bytes() / 1000000);
    std::cout << absl::StrFormat(
        "%s: %d records in %d blocks of up to %d%s; %s\n", file, index->num_records(),
        index->block_offsets_size(), options.block_records, gzip,
        outcome.built ? "indexed (" + outcome.why_built + ")" : "its index is current");
  }
  return true;
}

}  // namespace

int RunIndexDataCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain index-data: expected one argument, the job spec file; got " << args.size()
              << " (see pstrain index-data --help)\n";
    return kExitUsage;
  }
  absl::StatusOr<JobSpec> spec = LoadPreparedJobSpec(args[0]);
  if (!spec.ok()) {
    std::cerr << "pstrain index-data: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  PosixEnv env;
  if (spec->has_train_data() && !IndexData(env, "train", spec->train_data())) return 1;
  if (spec->has_eval_data() && !IndexData(env, "eval", spec->eval_data())) return 1;
  return 0;
}

Subcommand IndexDataCommand() {
  return {"index-data",
          "JOB.pbtxt",
          "index a job's data files for streamed reading",
          absl::StrCat(
          "Writes the offset index beside each file of the job's train_data and eval_data\n"
          "(<file>.pstrain-index) that streams: ", StreamingFormats(), ". The\n"
          "index says where each block of stream_block_records records (lines, for\n"
          "text) starts, and what the records hold. Streamed reading (read_mode) builds\n"
          "a missing or stale index at its first read; running this first does that work\n"
          "once, ahead of the job, and where the job's processes could not write it (a\n"
          "folder they may only read). Reads and checks every record, so a damaged file is\n"
          "found here. An index that is current (same file size and modification time,\n"
          "block size and decoding options) is kept. A gzipped file's index also keeps\n"
          "where inflation can start before each block, with the 32 KiB of stream\n"
          "before each such point in <file>.pstrain-index.gzip-windows.\n"
          "\n"
          "Exit codes: 0 every file indexed or current; 1 a file could not be read or its\n"
          "index written; 2 bad usage or an invalid spec.\n"
          "\n"
          "Example:\n"
          "  pstrain index-data examples/fashion_mnist_tfrecord.pbtxt"),
          {},
          RunIndexDataCommand};
}

}  // namespace pstrain
