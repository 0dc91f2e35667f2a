#ifndef PSTRAIN_COMMON_CHECKPOINT_SHARD_FILE_H_
#define PSTRAIN_COMMON_CHECKPOINT_SHARD_FILE_H_

// A parameter-server shard's file in a checkpoint
// (ckpt-<step>/shard-<i>-of-<n>): every variable the shard holds with its
// optimizer slots, the shard's version and its exactly-once state. The
// parameter servers write and restore it; the evaluator and the exporter
// read the variables' values from it.
//
// Layout (little-endian):
//   magic "PSTRSHRD", u32 format version (1)
//   records, each: u32 type, u64 payload length, payload,
//                  u32 masked CRC32C (common/checksum/crc32c.h) of type,
//                  length and payload
//     HEADER    job id, shard index, num shards, version, global step,
//               optimizer name, slots per element, variable count
//     VARIABLE  (one per variable) name, kind (1 dense, 2 embedding), dims,
//               slots per element, then
//               dense: element count, then the values and each slot, that
//                 many floats each;
//               embedding: row count, floats per row, then per row its id
//                 and its value followed by each slot
//     DEDUP     the writer's exactly-once state, opaque here
//     END       the number of records before it
// Strings are a u64 length and the bytes. A writer writes the file under a
// temporary name, fsyncs it, renames it into place and fsyncs its folder, so
// a reader sees the whole file or none.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/checkpoint/env.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

inline constexpr uint32_t kShardFileFormatVersion = 1;

// The first record of a shard file.
struct ShardFileHeader {
  std::string job_id;
  int32_t shard_index = 0;
  int32_t num_shards = 1;
  // Updates the shard had applied.
  int64_t version = 0;
  // The job's global step the checkpoint was taken at.
  int64_t global_step = 0;
  // The optimizer (Optimizer::name()) and its slots per element.
  std::string optimizer;
  int32_t num_slots = 0;
  int64_t num_variables = 0;
};

// What a variable record says of its variable besides the numbers.
struct ShardFileVariable {
  std::string name;
  // VARIABLE_KIND_DENSE or VARIABLE_KIND_EMBEDDING.
  VariableKind kind = VARIABLE_KIND_DENSE;
  // As in its VariableSpec: a dense variable's full shape, a table's
  // [vocabulary_size (0: dynamic), dim].
  std::vector<int64_t> dims;
  // Dense: the elements of the values and of each slot (the product of
  // dims).
  int64_t num_elements = 0;
  // Embedding: the rows held, and the floats of each: dim values, then dim
  // floats of each slot.
  int64_t num_rows = 0;
  int64_t row_floats = 0;
};

// Size and checksum of a whole shard file, as the MANIFEST lists them.
struct ShardFileInfo {
  int64_t bytes = 0;
  uint32_t crc32c = 0;  // unmasked CRC32C of every byte
};

// Writes one shard file, record by record, without copying the variables:
// a header, header.num_variables variables (WriteDenseVariable, or
// BeginTable / AppendRow... / EndTable), the exactly-once state, then
// Commit. Not thread-safe.
class ShardFileWriter {
 public:
  // Creates any missing folders above `path` and a temporary file beside
  // it; nothing appears at `path` until Commit succeeds. Env errors.
  static absl::StatusOr<std::unique_ptr<ShardFileWriter>> Create(Env& env, std::string path);

  // Removes the temporary file unless Commit succeeded.
  ~ShardFileWriter();
  ShardFileWriter(const ShardFileWriter&) = delete;
  ShardFileWriter& operator=(const ShardFileWriter&) = delete;

  // Each of these returns FailedPrecondition when called out of the order
  // above or with sizes other than the header and the variable announce
  // (the file is then unusable), and the Env's error when a write fails.
  absl::Status WriteHeader(const ShardFileHeader& header);
  // `variable.kind` dense, num_elements the product of its dims; `values`
  // and each of header.num_slots `slots` hold num_elements floats.
  absl::Status WriteDenseVariable(const ShardFileVariable& variable, absl::Span<const float> values,
                                  absl::Span<const absl::Span<const float>> slots);
  // `variable.kind` embedding, with the num_rows rows that follow and
  // row_floats = dims[1] * (1 + header.num_slots).
  absl::Status BeginTable(const ShardFileVariable& variable);
  // `row` holds row_floats floats.
  absl::Status AppendRow(int64_t id, const float* row);
  // FailedPrecondition unless exactly num_rows rows were appended.
  absl::Status EndTable();
  absl::Status WriteDedupState(absl::string_view state);

  // Writes the end record, fsyncs the file, renames it to `path` (replacing
  // any file there) and fsyncs the folder. FailedPrecondition when records
  // are missing.
  absl::StatusOr<ShardFileInfo> Commit();

 private:
  enum class Stage { kHeader, kVariables, kTable, kDedup, kCommit, kDone, kBroken };

  ShardFileWriter(Env& env, std::string path, std::string temporary,
                  std::unique_ptr<WritableFile> file);
  absl::Status Expect(Stage stage, absl::string_view what);
  absl::Status Append(absl::string_view bytes);
  absl::Status BeginRecord(uint32_t type, uint64_t length);
  absl::Status EndRecord();
  absl::Status Record(uint32_t type, absl::string_view payload);

  Env& env_;
  const std::string path_;
  const std::string temporary_;
  std::unique_ptr<WritableFile> file_;
  Stage stage_ = Stage::kHeader;
  int num_slots_ = 0;
  int64_t variables_left_ = 0;
  int64_t rows_left_ = 0;
  int64_t row_floats_ = 0;
  int64_t records_ = 0;
  uint32_t file_crc_ = 0;
  uint32_t record_crc_ = 0;
  int64_t bytes_ = 0;
};

// What the MANIFEST says of a shard file; the defaults check nothing.
struct ShardFileExpectation {
  // > 0: the file must have exactly this many bytes.
  int64_t bytes = 0;
  uint32_t crc32c = 0;
  // Whether to compare the file's CRC32C with `crc32c`.
  bool check_crc32c = false;
};

// A shard file read whole into memory and verified. Immutable after Open and
// thread-safe.
class ShardFileReader {
 public:
  // Reads `path` and checks it against `expect`, then its magic, format
  // version, every record's checksum, and that every record decodes and
  // agrees with the header.
  // NotFound: no file at `path`.
  // DataLoss: the file is truncated or damaged (the message names the record
  //   by number, type and, for a variable, name) or differs from `expect`.
  // FailedPrecondition: a format version this build does not read.
  // The Env's errors otherwise.
  static absl::StatusOr<std::unique_ptr<ShardFileReader>> Open(
      Env& env, const std::string& path, const ShardFileExpectation& expect = {});

  // Variables refer into the file's contents, held here.
  ShardFileReader(const ShardFileReader&) = delete;
  ShardFileReader& operator=(const ShardFileReader&) = delete;

  const std::string& path() const { return path_; }
  const ShardFileInfo& info() const { return info_; }
  const ShardFileHeader& header() const { return header_; }
  int num_variables() const { return static_cast<int>(variables_.size()); }
  const ShardFileVariable& variable(int i) const { return variables_[i].variable; }
  // The index of the variable named `name`, or -1.
  int FindVariable(absl::string_view name) const;

  // Dense variable `i`: copies its values (part 0) or slot part - 1 (part in
  // [1, num_slots]) to out[0, num_elements).
  void CopyDense(int i, int part, float* out) const;
  // Embedding table `i`: copies its ids to ids[0, num_rows) and its rows
  // (value and slots, in the file's order) to rows[0, num_rows * row_floats).
  void CopyRows(int i, int64_t* ids, float* rows) const;
  // The writer's exactly-once state.
  absl::string_view dedup_state() const { return dedup_state_; }

 private:
  struct Entry {
    ShardFileVariable variable;
    // The floats (dense) or rows (embedding) of the record.
    absl::string_view data;
  };

  ShardFileReader() = default;
  absl::Status Parse(const ShardFileExpectation& expect);

  std::string path_;
  std::string contents_;
  ShardFileInfo info_;
  ShardFileHeader header_;
  std::vector<Entry> variables_;
  absl::string_view dedup_state_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_SHARD_FILE_H_
