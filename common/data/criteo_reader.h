#ifndef PSTRAIN_COMMON_DATA_CRITEO_READER_H_
#define PSTRAIN_COMMON_DATA_CRITEO_READER_H_

// Criteo display-advertising logs, as CriteoSource (protos/job.proto)
// describes them: per line the label, 13 integer features and 26
// hexadecimal categorical features, tab-separated, any feature possibly
// empty.

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/in_memory_source.h"
#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

inline constexpr int kCriteoIntegerFeatures = 13;
inline constexpr int kCriteoCategoricalFeatures = 26;

// The name categorical feature `field` (0-based) is hashed with: "C<field+1>",
// as the data set's documentation numbers them. Its ids reach checkpoints
// (they pick embedding rows): never change it.
absl::string_view CriteoFieldName(int field);

// Decodes Criteo lines one at a time. Not thread-safe.
class CriteoLineDecoder {
 public:
  // hash_buckets > 0.
  explicit CriteoLineDecoder(int64_t hash_buckets);
  // Appends the example of `line` (without its line break) to *examples and
  // sets its dense_dim, num_fields and sparse_dim. On error *examples is
  // unchanged. InvalidArgument saying what is wrong, for the caller to
  // prefix with the file and line: not exactly 40 tab-separated columns, a
  // label other than 0 or 1, an integer feature that is not a 64-bit
  // integer, a categorical feature that is not 1 to 16 hexadecimal digits.
  absl::Status Append(absl::string_view line, InMemorySource::Examples* examples);

 private:
  const int64_t hash_buckets_;
  // Each field's id for a missing value.
  std::array<int64_t, kCriteoCategoricalFeatures> missing_ids_;
};

// Appends the examples of `text`, the contents of `file` (named in errors),
// to *examples, and sets its dense_dim (13), num_fields (26) and sparse_dim
// (hash_buckets). Blank lines are skipped; a line may end in "\r\n".
// InvalidArgument: hash_buckets <= 0; or, as "<file>:<line>: <reason>": a
// line without exactly 40 tab-separated columns, a label other than 0 or 1,
// an integer feature that is not a 64-bit integer, a categorical feature
// that is not 1 to 16 hexadecimal digits. After an error *examples holds
// the lines before it.
absl::Status ParseCriteo(absl::string_view text, absl::string_view file, int64_t hash_buckets,
                         InMemorySource::Examples* examples);

// Reads the files `spec` names (each plain or gzipped) into memory.
// NotFound: a path or pattern matching no file. InvalidArgument: no
// paths, hash_buckets < 0, no examples, ParseCriteo's errors, a
// corrupt gzip stream.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCriteo(const CriteoSource& spec);

// The lines of the files `spec` names as records, for streaming them
// (uncompressed files only). `spec` must have passed job-spec validation.
std::unique_ptr<const RecordFormat> CriteoRecordFormat(const CriteoSource& spec);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CRITEO_READER_H_
