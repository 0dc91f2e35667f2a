#ifndef PSTRAIN_COMMON_DATA_RECORD_FORMAT_H_
#define PSTRAIN_COMMON_DATA_RECORD_FORMAT_H_

// What streaming needs of a file format: how its files split into records
// (TFRecord framing, lines of text) and how a record becomes an example.
// The index (record_index.h) and the streamed source (streamed_source.h)
// are written once over this; each format implements it beside its reader.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "common/data/dataset_info.h"
#include "common/data/in_memory_source.h"

namespace pstrain {

// What decoding every record of a file found: kept in its index, so that
// opening the data set needs no pass over the records. A value type.
struct RecordSummary {
  // Values per dense feature, in the spec's order.
  std::vector<int64_t> dense_widths;
  // Whether every record held one id of each categorical field.
  bool one_id_per_field = true;
  // ClassCountOf the labels (0: some label is not a class id).
  int32_t num_classes = 0;
  // Whether every label is -1 or +1 (libsvm's binary labels, read as 0/1).
  bool plus_minus_one_labels = false;
  // The largest sparse id + 1; 0 when there are none.
  int64_t sparse_ids_end = 0;
};

// Decodes records one at a time. Not thread-safe.
class RecordDecoder {
 public:
  virtual ~RecordDecoder() = default;
  // Appends the example `record` holds to *examples. InvalidArgument
  // saying what is wrong with it, for the caller to prefix with where the
  // record is.
  virtual absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) = 0;
  // Values per dense feature: as expected, or learned from the first record.
  virtual std::vector<int64_t> dense_widths() const = 0;
  // Whether every record so far held one id of each categorical field.
  virtual bool one_id_per_field() const = 0;
};

// Calls visit(record, offset) for records in file order.
using RecordVisitor = absl::FunctionRef<absl::Status(absl::string_view record, int64_t offset)>;

// One data spec's files and decoding options. Immutable; thread-safe.
class RecordFormat {
 public:
  virtual ~RecordFormat() = default;

  // The source's kind, for logs and errors: "tfrecord", "criteo", ...
  virtual absl::string_view name() const = 0;
  // The file patterns the spec names.
  virtual std::vector<std::string> patterns() const = 0;
  // The decoding options a file's summary depends on: stored in its index,
  // which other options rebuild. Readable.
  virtual std::string DecodingKey() const = 0;

  // Whether `path`'s records are gzip-compressed (offsets then count in
  // the stream it inflates to). Errors: the Env's (NotFound).
  virtual absl::StatusOr<bool> IsGzipped(Env& env, const std::string& path) const = 0;
  // Reads `file` (`path`'s records' stream, inflated if gzipped) from its
  // start, visiting each record with its stream offset. The errors of
  // `visit` come back prefixed with the record's place in the file
  // ("<path>:<line>: " or "<path>: record <i> at offset <o>: "); framing
  // errors (DataLoss, InvalidArgument) name the file and place too.
  virtual absl::Status Scan(SequentialFile& file, const std::string& path,
                            RecordVisitor visit) const = 0;
  // Visits the records of `bytes`, a stretch of a stream that starts at a
  // record's start, at stream offset `offset`, and ends at a record's end.
  // DataLoss naming the offset (not the file): framing that does not hold.
  virtual absl::Status Split(absl::string_view bytes, int64_t offset,
                             RecordVisitor visit) const = 0;

  // A decoder of the records. `expected`: the data set's summary, which
  // every record must agree with; null while indexing a file, when the
  // decoder learns the dense widths from the first record.
  virtual std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary* expected) const = 0;
  // Sets info's sparse_dim, num_fields and num_classes from the data set's
  // summary (the caller sets num_examples and dense_dim).
  virtual void Describe(const RecordSummary& summary, DatasetInfo* info) const = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_RECORD_FORMAT_H_
