#ifndef PSTRAIN_COMMON_SUMMARY_SUMMARY_WRITER_H_
#define PSTRAIN_COMMON_SUMMARY_SUMMARY_WRITER_H_

// Where a training or evaluation loop sends its scalars (loss, learning
// rate, examples/s, eval metrics). FileSummaryWriter
// (common/summary/file_summary_writer.h) writes them under a model_dir;
// tests can substitute their own.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// Implementations are thread-safe.
class SummaryWriter {
 public:
  virtual ~SummaryWriter() = default;

  // Records `value` of `tag` at global step `step`. May be buffered until
  // the next flush. Non-finite values are recorded as they are (a NaN loss
  // is worth seeing).
  // InvalidArgument: an empty tag, or one with characters other than
  //   printable ASCII.
  // FailedPrecondition: after Close.
  virtual absl::Status WriteScalar(int64_t step, absl::string_view tag, double value) = 0;

  // Makes everything written so far visible to readers.
  virtual absl::Status Flush() = 0;

  // Flushes and releases the files; later writes fail. Idempotent.
  virtual absl::Status Close() = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_SUMMARY_WRITER_H_
