#include "common/checkpoint/shard_file.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/internal/byte_codec.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr char kMagic[8] = {'P', 'S', 'T', 'R', 'S', 'H', 'R', 'D'};
enum RecordType : uint32_t { kHeader = 1, kVariable = 2, kDedup = 3, kEnd = 4 };
constexpr uint32_t kDenseKind = 1, kEmbeddingKind = 2;
// Bytes before a record's payload: its type and length (its masked CRC32C
// follows the payload).
constexpr size_t kRecordPrefix = 12;
// No variable of a real job has this many dims; a count beyond it means a
// damaged record.
constexpr uint64_t kMaxDims = 64;

const char* TypeName(uint32_t type) {
  switch (type) {
    case kHeader:
      return "header";
    case kVariable:
      return "variable";
    case kDedup:
      return "dedup state";
    case kEnd:
      return "end";
  }
  return "unknown";
}

// One record of a shard file as it lies in the file, its checksum checked.
struct RawRecord {
  uint32_t type;
  absl::string_view payload;
  std::string name;  // for messages: a variable's name, as far as it reads
};

// The record's type and, for a variable, its name: "variable \"w\"".
std::string RecordTitle(uint32_t type, const std::string& name) {
  return absl::StrCat(TypeName(type), name.empty() ? "" : absl::StrCat(" \"", name, "\""));
}

// DataLoss for a record that does not decode, naming it.
struct RecordErrors {
  const std::string& path;
  const std::vector<RawRecord>& records;

  absl::Status operator()(size_t n, absl::string_view why) const {
    return absl::DataLossError(absl::StrCat(path, ": record ", n, " (",
                                            RecordTitle(records[n].type, records[n].name),
                                            ") does not decode: ", why));
  }
};

// The records of `data` (the file at `path`) after its magic and format
// version, each one's checksum checked, up to and with the end record.
absl::StatusOr<std::vector<RawRecord>> SplitRecords(const std::string& path,
                                                    absl::string_view data) {
  internal::ByteReader in(data);
  char magic[8];
  uint32_t format = 0;
  if (!in.GetRaw(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(path, " is not a shard file (bad magic)"));
  }
  if (!in.GetU32(&format)) return absl::DataLossError(absl::StrCat(path, " is truncated"));
  if (format != kShardFileFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " has shard file format ", format, "; this build reads ", kShardFileFormatVersion));
  }
  std::vector<RawRecord> records;
  for (int n = 0;; ++n) {
    const size_t at = data.size() - in.remaining();
    uint32_t type = 0, masked = 0;
    uint64_t length = 0;
    absl::string_view payload;
    if (!in.GetU32(&type) || !in.GetU64(&length) || length > in.remaining() ||
        !in.GetView(length, &payload) || !in.GetU32(&masked)) {
      return absl::DataLossError(absl::StrCat(path, " is truncated in record ", n, " (",
                                              TypeName(type), ") at byte ", at));
    }
    RawRecord record{type, payload, ""};
    if (type == kVariable) {
      internal::ByteReader name(payload);
      if (!name.GetString(&record.name) || record.name.size() > 256) record.name.clear();
    }
    const uint32_t crc =
        Crc32cExtend(Crc32c(data.substr(at, kRecordPrefix)), payload.data(), payload.size());
    if (crc != Crc32cUnmask(masked)) {
      return absl::DataLossError(absl::StrCat(path, ": record ", n, " (",
                                              RecordTitle(type, record.name), ") at byte ", at,
                                              " fails its checksum"));
    }
    records.push_back(std::move(record));
    if (type == kEnd) break;
  }
  if (in.remaining() != 0) {
    return absl::DataLossError(
        absl::StrCat(path, " has ", in.remaining(), " bytes after its end record"));
  }
  return records;
}

// Decodes the header record (records[0]) into *header, and the number of
// variable records and slots per element it announces; returns why it
// does not decode, or nothing.
std::string DecodeHeader(const std::vector<RawRecord>& records, ShardFileHeader* header,
                         uint64_t* num_variables, uint32_t* slots) {
  internal::ByteReader h(records.front().payload);
  uint32_t index = 0, count = 0;
  if (!h.GetString(&header->job_id) || !h.GetU32(&index) || !h.GetU32(&count) ||
      !h.GetI64(&header->version) || !h.GetI64(&header->global_step) ||
      !h.GetString(&header->optimizer) || !h.GetU32(slots) || !h.GetU64(num_variables) ||
      h.remaining() != 0) {
    return "fields are missing or left over";
  }
  if (header->version < 0 || count == 0 || index >= count || *slots > 64 || records.size() < 3 ||
      *num_variables != records.size() - 3) {
    return absl::StrCat("shard ", index, " of ", count, ", version ", header->version, ", ", *slots,
                        " slots, ", *num_variables, " variables in ", records.size(), " records");
  }
  header->shard_index = static_cast<int32_t>(index);
  header->num_shards = static_cast<int32_t>(count);
  header->num_slots = static_cast<int32_t>(*slots);
  header->num_variables = static_cast<int64_t>(*num_variables);
  return "";
}

// Reads the count of a dense variable's elements after its head; returns
// why it disagrees with its dims or the bytes left, or nothing.
std::string DecodeDenseSize(internal::ByteReader& v, uint32_t slots, ShardFileVariable* var) {
  const uint64_t row_bytes = 4 * (1 + uint64_t{slots});
  uint64_t elements = 0, product = 1;
  for (int64_t d : var->dims) {
    product = d == 0 || product <= (uint64_t{1} << 40) / d ? product * d : 0;
  }
  if (!v.GetU64(&elements) || elements != product || product == 0 ||
      v.remaining() != elements * row_bytes) {
    return "its element count disagrees with its dims or its size";
  }
  var->num_elements = static_cast<int64_t>(elements);
  return "";
}

// As DecodeDenseSize, for an embedding table's rows.
std::string DecodeTableSize(internal::ByteReader& v, uint32_t slots, ShardFileVariable* var) {
  uint64_t rows = 0, row_floats = 0;
  if (var->dims.size() != 2 || var->dims[1] <= 0 || var->dims[1] > (int64_t{1} << 30) ||
      !v.GetU64(&rows) || !v.GetU64(&row_floats) ||
      row_floats != static_cast<uint64_t>(var->dims[1]) * (1 + slots) ||
      rows > v.remaining() / (8 + 4 * row_floats) || v.remaining() != rows * (8 + 4 * row_floats)) {
    return "its row count and width disagree with its dims or its size";
  }
  var->num_rows = static_cast<int64_t>(rows);
  var->row_floats = static_cast<int64_t>(row_floats);
  return "";
}

// Decodes a variable record's `payload` into *var and the bytes of its
// floats or rows into *data; returns why it does not decode, or nothing.
std::string DecodeVariable(absl::string_view payload, uint32_t slots, ShardFileVariable* var,
                           absl::string_view* data) {
  internal::ByteReader v(payload);
  uint32_t kind = 0, num_slots = 0;
  uint64_t num_dims = 0;
  if (!v.GetString(&var->name) || !v.GetU32(&kind) || !v.GetU64(&num_dims) || num_dims > kMaxDims) {
    return "no name, kind and dims";
  }
  var->dims.resize(num_dims);
  for (int64_t& d : var->dims) {
    if (!v.GetI64(&d) || d < 0) return "a dim is missing or negative";
  }
  if (!v.GetU32(&num_slots) || num_slots != slots) {
    return "its slots per element differ from the header's";
  }
  std::string why;
  if (kind == kDenseKind) {
    var->kind = VARIABLE_KIND_DENSE;
    why = DecodeDenseSize(v, slots, var);
  } else if (kind == kEmbeddingKind) {
    var->kind = VARIABLE_KIND_EMBEDDING;
    why = DecodeTableSize(v, slots, var);
  } else {
    why = absl::StrCat("unknown kind ", kind);
  }
  if (why.empty()) v.GetView(v.remaining(), data);
  return why;
}

// A temporary name no other writer in this process or another uses.
std::string TemporaryPath(const std::string& path) {
  static std::atomic<uint64_t> next{0};
  return absl::StrCat(path, ".tmp-", ::getpid(), "-", next.fetch_add(1));
}

// The fields of a variable record before its floats.
std::string VariableHead(const ShardFileVariable& v, int num_slots) {
  internal::ByteWriter w;
  w.PutString(v.name);
  w.PutU32(v.kind == VARIABLE_KIND_EMBEDDING ? kEmbeddingKind : kDenseKind);
  w.PutU64(v.dims.size());
  for (int64_t d : v.dims) w.PutI64(d);
  w.PutU32(static_cast<uint32_t>(num_slots));
  if (v.kind == VARIABLE_KIND_EMBEDDING) {
    w.PutU64(static_cast<uint64_t>(v.num_rows));
    w.PutU64(static_cast<uint64_t>(v.row_floats));
  } else {
    w.PutU64(static_cast<uint64_t>(v.num_elements));
  }
  return w.Release();
}

absl::string_view Floats(absl::Span<const float> values) {
  return absl::string_view(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

}  // namespace

// ------------------------------------------------------------------ writer --

absl::StatusOr<std::unique_ptr<ShardFileWriter>> ShardFileWriter::Create(Env& env,
                                                                         std::string path) {
  RETURN_IF_ERROR(CreateDirs(env, Dirname(path)));
  std::string temporary = TemporaryPath(path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env.NewWritableFile(temporary));
  std::unique_ptr<ShardFileWriter> writer(
      new ShardFileWriter(env, std::move(path), std::move(temporary), std::move(file)));
  const uint32_t format = kShardFileFormatVersion;
  RETURN_IF_ERROR(writer->Append(absl::string_view(kMagic, sizeof(kMagic))));
  RETURN_IF_ERROR(writer->Append(absl::string_view(reinterpret_cast<const char*>(&format), 4)));
  return writer;
}

ShardFileWriter::ShardFileWriter(Env& env, std::string path, std::string temporary,
                                 std::unique_ptr<WritableFile> file)
    : env_(env), path_(std::move(path)), temporary_(std::move(temporary)), file_(std::move(file)) {}

ShardFileWriter::~ShardFileWriter() {
  if (stage_ == Stage::kDone) return;
  file_.reset();
  // Best effort: the error that mattered was returned when the write failed.
  (void)env_.RemoveFile(temporary_);
}

absl::Status ShardFileWriter::Expect(Stage stage, absl::string_view what) {
  if (stage_ == stage) return absl::OkStatus();
  const bool broken = stage_ == Stage::kBroken;
  stage_ = Stage::kBroken;
  return absl::FailedPreconditionError(
      absl::StrCat(path_, ": ", what, broken ? " after a failed write" : " out of order"));
}

absl::Status ShardFileWriter::Append(absl::string_view bytes) {
  file_crc_ = Crc32cExtend(file_crc_, bytes.data(), bytes.size());
  record_crc_ = Crc32cExtend(record_crc_, bytes.data(), bytes.size());
  bytes_ += static_cast<int64_t>(bytes.size());
  absl::Status status = file_->Append(bytes);
  if (!status.ok()) stage_ = Stage::kBroken;
  return status;
}

absl::Status ShardFileWriter::BeginRecord(uint32_t type, uint64_t length) {
  record_crc_ = 0;
  RETURN_IF_ERROR(Append(absl::string_view(reinterpret_cast<const char*>(&type), 4)));
  return Append(absl::string_view(reinterpret_cast<const char*>(&length), 8));
}

absl::Status ShardFileWriter::EndRecord() {
  const uint32_t masked = Crc32cMask(record_crc_);
  ++records_;
  return Append(absl::string_view(reinterpret_cast<const char*>(&masked), 4));
}

absl::Status ShardFileWriter::Record(uint32_t type, absl::string_view payload) {
  RETURN_IF_ERROR(BeginRecord(type, payload.size()));
  RETURN_IF_ERROR(Append(payload));
  return EndRecord();
}

absl::Status ShardFileWriter::WriteHeader(const ShardFileHeader& header) {
  RETURN_IF_ERROR(Expect(Stage::kHeader, "the header"));
  if (header.num_variables < 0 || header.num_slots < 0) {
    stage_ = Stage::kBroken;
    return absl::FailedPreconditionError(absl::StrCat(path_, ": a header with negative counts"));
  }
  internal::ByteWriter w;
  w.PutString(header.job_id);
  w.PutU32(static_cast<uint32_t>(header.shard_index));
  w.PutU32(static_cast<uint32_t>(header.num_shards));
  w.PutI64(header.version);
  w.PutI64(header.global_step);
  w.PutString(header.optimizer);
  w.PutU32(static_cast<uint32_t>(header.num_slots));
  w.PutU64(static_cast<uint64_t>(header.num_variables));
  RETURN_IF_ERROR(Record(kHeader, w.Release()));
  num_slots_ = header.num_slots;
  variables_left_ = header.num_variables;
  stage_ = variables_left_ > 0 ? Stage::kVariables : Stage::kDedup;
  return absl::OkStatus();
}

absl::Status ShardFileWriter::WriteDenseVariable(const ShardFileVariable& variable,
                                                 absl::Span<const float> values,
                                                 absl::Span<const absl::Span<const float>> slots) {
  RETURN_IF_ERROR(Expect(Stage::kVariables, absl::StrCat("variable \"", variable.name, "\"")));
  bool sizes_agree = variable.kind == VARIABLE_KIND_DENSE &&
                     static_cast<int64_t>(values.size()) == variable.num_elements &&
                     static_cast<int>(slots.size()) == num_slots_;
  int64_t n = 1;
  for (int64_t d : variable.dims) n *= d;
  sizes_agree = sizes_agree && n == variable.num_elements;
  for (absl::Span<const float> s : slots) {
    sizes_agree = sizes_agree && static_cast<int64_t>(s.size()) == variable.num_elements;
  }
  if (!sizes_agree) {
    stage_ = Stage::kBroken;
    return absl::FailedPreconditionError(absl::StrCat(path_, ": dense variable \"", variable.name,
                                                      "\" with sizes that do not agree"));
  }
  const std::string head = VariableHead(variable, num_slots_);
  const uint64_t floats = static_cast<uint64_t>(variable.num_elements) * (1 + num_slots_);
  RETURN_IF_ERROR(BeginRecord(kVariable, head.size() + floats * 4));
  RETURN_IF_ERROR(Append(head));
  RETURN_IF_ERROR(Append(Floats(values)));
  for (absl::Span<const float> s : slots) RETURN_IF_ERROR(Append(Floats(s)));
  RETURN_IF_ERROR(EndRecord());
  if (--variables_left_ == 0) stage_ = Stage::kDedup;
  return absl::OkStatus();
}

absl::Status ShardFileWriter::BeginTable(const ShardFileVariable& variable) {
  RETURN_IF_ERROR(Expect(Stage::kVariables, absl::StrCat("table \"", variable.name, "\"")));
  if (variable.kind != VARIABLE_KIND_EMBEDDING || variable.dims.size() != 2 ||
      variable.num_rows < 0 || variable.row_floats != variable.dims[1] * (1 + num_slots_)) {
    stage_ = Stage::kBroken;
    return absl::FailedPreconditionError(absl::StrCat(path_, ": embedding table \"", variable.name,
                                                      "\" with sizes that do not agree"));
  }
  const std::string head = VariableHead(variable, num_slots_);
  const uint64_t rows = static_cast<uint64_t>(variable.num_rows);
  RETURN_IF_ERROR(
      BeginRecord(kVariable, head.size() + rows * (8 + variable.row_floats * uint64_t{4})));
  RETURN_IF_ERROR(Append(head));
  rows_left_ = variable.num_rows;
  row_floats_ = variable.row_floats;
  stage_ = Stage::kTable;
  return absl::OkStatus();
}

absl::Status ShardFileWriter::AppendRow(int64_t id, const float* row) {
  RETURN_IF_ERROR(Expect(Stage::kTable, "a row"));
  if (rows_left_ == 0) {
    stage_ = Stage::kBroken;
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": more rows than the table announced"));
  }
  --rows_left_;
  RETURN_IF_ERROR(Append(absl::string_view(reinterpret_cast<const char*>(&id), 8)));
  return Append(Floats(absl::MakeConstSpan(row, row_floats_)));
}

absl::Status ShardFileWriter::EndTable() {
  RETURN_IF_ERROR(Expect(Stage::kTable, "the end of a table"));
  if (rows_left_ != 0) {
    stage_ = Stage::kBroken;
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": ", rows_left_, " fewer rows than the table announced"));
  }
  RETURN_IF_ERROR(EndRecord());
  stage_ = --variables_left_ == 0 ? Stage::kDedup : Stage::kVariables;
  return absl::OkStatus();
}

absl::Status ShardFileWriter::WriteDedupState(absl::string_view state) {
  RETURN_IF_ERROR(Expect(Stage::kDedup, "the dedup state"));
  RETURN_IF_ERROR(Record(kDedup, state));
  stage_ = Stage::kCommit;
  return absl::OkStatus();
}

absl::StatusOr<ShardFileInfo> ShardFileWriter::Commit() {
  RETURN_IF_ERROR(Expect(Stage::kCommit, "the commit"));
  internal::ByteWriter end;
  end.PutU64(static_cast<uint64_t>(records_));
  absl::Status status = Record(kEnd, end.Release());
  if (status.ok()) status = file_->Sync();
  if (status.ok()) status = file_->Close();
  if (status.ok()) status = env_.Rename(temporary_, path_);
  if (!status.ok()) {
    stage_ = Stage::kBroken;
    return status;
  }
  stage_ = Stage::kDone;
  // Without this the rename itself may be lost in a crash.
  RETURN_IF_ERROR(env_.SyncDir(Dirname(path_)));
  return ShardFileInfo{bytes_, file_crc_};
}

// ------------------------------------------------------------------ reader --

absl::StatusOr<std::unique_ptr<ShardFileReader>> ShardFileReader::Open(
    Env& env, const std::string& path, const ShardFileExpectation& expect) {
  std::unique_ptr<ShardFileReader> reader(new ShardFileReader());
  reader->path_ = path;
  ASSIGN_OR_RETURN(reader->contents_,
                   ReadWholeFile(env, path, std::numeric_limits<int64_t>::max()));
  RETURN_IF_ERROR(reader->Parse(expect));
  return reader;
}

absl::Status ShardFileReader::Parse(const ShardFileExpectation& expect) {
  const absl::string_view data = contents_;
  info_.bytes = static_cast<int64_t>(data.size());
  info_.crc32c = Crc32c(data);
  if (expect.bytes > 0 && info_.bytes != expect.bytes) {
    return absl::DataLossError(
        absl::StrCat(path_, " has ", info_.bytes, " bytes; the manifest says ", expect.bytes));
  }
  if (expect.check_crc32c && info_.crc32c != expect.crc32c) {
    return absl::DataLossError(absl::StrCat(path_, " does not match the CRC32C in the manifest"));
  }
  ASSIGN_OR_RETURN(const std::vector<RawRecord> records, SplitRecords(path_, data));
  const RecordErrors bad{path_, records};

  uint64_t num_variables = 0;
  uint32_t slots = 0;
  if (records.front().type != kHeader) return bad(0, "the file must start with a header");
  if (std::string why = DecodeHeader(records, &header_, &num_variables, &slots); !why.empty()) {
    return bad(0, why);
  }
  for (size_t n = 1; n <= num_variables; ++n) {
    if (records[n].type != kVariable) return bad(n, "a variable record was expected");
    Entry& e = variables_.emplace_back();
    if (std::string why = DecodeVariable(records[n].payload, slots, &e.variable, &e.data);
        !why.empty()) {
      return bad(n, why);
    }
  }
  if (records[num_variables + 1].type != kDedup) {
    return bad(num_variables + 1, "the dedup state was expected");
  }
  dedup_state_ = records[num_variables + 1].payload;
  internal::ByteReader end(records.back().payload);
  uint64_t record_count = 0;
  if (!end.GetU64(&record_count) || record_count != records.size() - 1) {
    return bad(records.size() - 1, "its record count disagrees with the file");
  }
  return absl::OkStatus();
}

int ShardFileReader::FindVariable(absl::string_view name) const {
  for (int i = 0; i < num_variables(); ++i) {
    if (variables_[i].variable.name == name) return i;
  }
  return -1;
}

void ShardFileReader::CopyDense(int i, int part, float* out) const {
  const Entry& e = variables_[i];
  const size_t bytes = static_cast<size_t>(e.variable.num_elements) * 4;
  std::memcpy(out, e.data.data() + part * bytes, bytes);
}

void ShardFileReader::CopyRows(int i, int64_t* ids, float* rows) const {
  const Entry& e = variables_[i];
  const size_t row_bytes = static_cast<size_t>(e.variable.row_floats) * 4;
  const char* p = e.data.data();
  for (int64_t r = 0; r < e.variable.num_rows; ++r) {
    std::memcpy(&ids[r], p, 8);
    std::memcpy(rows + r * e.variable.row_floats, p + 8, row_bytes);
    p += 8 + row_bytes;
  }
}

}  // namespace pstrain
