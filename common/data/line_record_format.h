#ifndef PSTRAIN_COMMON_DATA_LINE_RECORD_FORMAT_H_
#define PSTRAIN_COMMON_DATA_LINE_RECORD_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/data/record_format.h"
#include "common/data/text_lines.h"

namespace pstrain {

// A format whose records are lines of text (Criteo, CSV, libsvm): a line is
// read without its '\n' and a '\r' before it, the last one need not end in
// '\n', and lines that hold no record (blank ones; a header) are skipped as
// the in-memory readers skip them. Errors of decoding a line scanned from a
// file name it as "<file>:<line>: ", as those readers do. Files may be
// gzipped (told by their first bytes).
class LineRecordFormat : public RecordFormat {
 public:
  // A line longer than this is refused, as the in-memory readers refuse
  // it (common/data/text_lines.h).
  static constexpr int64_t kMaxLineBytes = pstrain::kMaxLineBytes;

  absl::StatusOr<bool> IsGzipped(Env& env, const std::string& path) const override;
  absl::Status Scan(SequentialFile& file, const std::string& path,
                    RecordVisitor visit) const override;
  absl::Status Split(absl::string_view bytes, int64_t offset, RecordVisitor visit) const override;

 protected:
  // Whether `line` holds a record. Default: it is not empty.
  virtual bool IsRecord(absl::string_view line) const { return !line.empty(); }
  // Whether each file's first record line is a header, not a record.
  virtual bool has_header() const { return false; }
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_LINE_RECORD_FORMAT_H_
