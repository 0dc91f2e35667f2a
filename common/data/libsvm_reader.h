#ifndef PSTRAIN_COMMON_DATA_LIBSVM_READER_H_
#define PSTRAIN_COMMON_DATA_LIBSVM_READER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/in_memory_source.h"
#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

// Decodes libsvm lines one at a time, labels as they are written. Not
// thread-safe.
class LibsvmLineDecoder {
 public:
  // `options` valid (num_features >= 0).
  explicit LibsvmLineDecoder(const LibsvmSource& options);
  // Appends the example of `line` (without its line break; a "# comment"
  // ignored) to *examples: its sparse ids, values and label. On error
  // *examples is unchanged. InvalidArgument saying what is wrong, for the
  // caller to prefix with the file and line (ParseLibsvm's reasons).
  absl::Status Append(absl::string_view line, InMemorySource::Examples* examples);

 private:
  const int64_t base_;
  const int64_t num_features_;
  // Reused from line to line.
  std::vector<absl::string_view> tokens_;
  std::vector<int64_t> ids_;
  std::vector<float> values_;
};

// Parses libsvm / svmlight text: "label index:value index:value ..." per
// line, indices strictly ascending, 1-based unless options.zero_based. Ids
// come out 0-based as sparse features with their values. A "# comment" ends
// a line; blank lines are ignored. Binary data labelled -1/+1 is relabelled
// 0/1 (when every label is -1 or +1); other labels are kept.
// InvalidArgument, as "<file>:<line>: <reason>": a label or value that is
// not a finite number, a pair without ':', an index that is not an
// integer, below the base, not above the previous one (out of order or
// repeated), or not below num_features when that is set; or no examples.
absl::StatusOr<std::unique_ptr<InMemorySource>> ParseLibsvm(absl::string_view text,
                                                            const LibsvmSource& options,
                                                            absl::string_view file);

// Reads the files options.path and options.paths name (each gzipped or
// not) and parses them as one data set. NotFound: a path or pattern that
// matches no file.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadLibsvm(const LibsvmSource& options);

// The lines of the files `options` names as records, for streaming them:
// binary -1/+1 labels read as 0/1 when every line of every file has one. `options` must have passed
// job-spec validation.
std::unique_ptr<const RecordFormat> LibsvmRecordFormat(const LibsvmSource& options);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_LIBSVM_READER_H_
