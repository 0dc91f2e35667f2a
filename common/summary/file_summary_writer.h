#ifndef PSTRAIN_COMMON_SUMMARY_FILE_SUMMARY_WRITER_H_
#define PSTRAIN_COMMON_SUMMARY_FILE_SUMMARY_WRITER_H_

// A SummaryWriter that writes each scalar to two files in one folder
// (model_dir/train or model_dir/eval): a TensorBoard event file of its own
// (common/summary/event_file_writer.h) and the folder's scalars.jsonl
// (common/summary/scalar_jsonl.h), which it appends to.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/summary/event_file_writer.h"
#include "common/summary/summary_writer.h"

namespace pstrain {

// model_dir/train and model_dir/eval.
std::string TrainSummaryDir(const std::string& model_dir);
std::string EvalSummaryDir(const std::string& model_dir);

struct FileSummaryWriterOptions {
  // Part of the event file's name. Default: this machine's host name.
  std::string hostname;
  // A background thread flushes both files this often, so TensorBoard and
  // report readers see scalars while the writer is idle (an evaluator
  // between checkpoints). Shorter shows data sooner for more write calls.
  // Default 10 s; zero: no thread, data is flushed only by Flush and Close
  // (and when a buffer fills).
  absl::Duration flush_interval = absl::Seconds(10);
};

// Thread-safe. One writer per folder at a time: two would share
// scalars.jsonl (their lines stay whole, but interleave).
class FileSummaryWriter final : public SummaryWriter {
 public:
  // Creates `dir` when missing, starts a new event file in it and opens
  // dir/scalars.jsonl for appending, first cutting off a partial last line
  // a crash may have left. `env` must outlive the writer.
  // Codes: from EventFileWriter::Create and the Env.
  static absl::StatusOr<std::unique_ptr<FileSummaryWriter>> Open(
      Env* env, const std::string& dir, FileSummaryWriterOptions options = {});

  // Closes, logging any error.
  ~FileSummaryWriter() override;
  FileSummaryWriter(const FileSummaryWriter&) = delete;
  FileSummaryWriter& operator=(const FileSummaryWriter&) = delete;

  // Wall time comes from the Env. An error from one file does not keep the
  // scalar from the other; the first error is returned.
  absl::Status WriteScalar(int64_t step, absl::string_view tag, double value) override;
  absl::Status Flush() override;
  // Also fsyncs both files.
  absl::Status Close() override;

  const std::string& event_file_path() const { return event_file_path_; }
  const std::string& jsonl_path() const { return jsonl_path_; }

 private:
  FileSummaryWriter(Env* env, std::unique_ptr<EventFileWriter> events,
                    std::unique_ptr<WritableFile> jsonl, std::string jsonl_path,
                    absl::Duration flush_interval);

  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushPeriodically();

  // Constant after construction.
  Env* const env_;
  const std::string event_file_path_;
  const std::string jsonl_path_;
  const absl::Duration flush_interval_;

  absl::Mutex mu_;
  std::unique_ptr<EventFileWriter> events_ ABSL_GUARDED_BY(mu_);  // null once closed
  std::unique_ptr<WritableFile> jsonl_ ABSL_GUARDED_BY(mu_);      // null once closed
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  // Whether written data awaits a flush, so an idle writer does no I/O.
  bool dirty_ ABSL_GUARDED_BY(mu_) = false;
  // The periodic flush logs its first failure only, not one per interval.
  bool flush_failure_logged_ ABSL_GUARDED_BY(mu_) = false;

  std::thread flusher_;  // joinable while the periodic flush runs
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_FILE_SUMMARY_WRITER_H_
