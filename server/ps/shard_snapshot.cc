#include "server/ps/shard_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"
#include "server/ps/internal/byte_codec.h"

namespace pstrain {
namespace {

constexpr char kMagic[8] = {'P', 'S', 'T', 'R', 'S', 'H', 'R', 'D'};
constexpr uint32_t kFormatVersion = 1;
enum RecordType : uint32_t { kHeader = 1, kVariable = 2, kDedup = 3, kEnd = 4 };
constexpr uint32_t kDenseKind = 1, kEmbeddingKind = 2;

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

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Buffered writes to a file descriptor with running CRCs of the whole file
// and of the current record. Not thread-safe.
class SnapshotFile {
 public:
  static absl::StatusOr<std::unique_ptr<SnapshotFile>> Create(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("cannot create", path);
    return std::unique_ptr<SnapshotFile>(new SnapshotFile(fd, path));
  }
  ~SnapshotFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Append(const void* data, size_t n) {
    file_crc_ = Crc32cExtend(file_crc_, static_cast<const char*>(data), n);
    record_crc_ = Crc32cExtend(record_crc_, static_cast<const char*>(data), n);
    bytes_ += static_cast<int64_t>(n);
    if (n >= kBufferBytes) {
      RETURN_IF_ERROR(Flush());
      return WriteAll(data, n);
    }
    if (buffer_.size() + n > kBufferBytes) RETURN_IF_ERROR(Flush());
    buffer_.append(static_cast<const char*>(data), n);
    return absl::OkStatus();
  }

  absl::Status BeginRecord(uint32_t type, uint64_t length) {
    record_crc_ = 0;
    RETURN_IF_ERROR(Append(&type, 4));
    return Append(&length, 8);
  }
  absl::Status EndRecord() {
    const uint32_t masked = Crc32cMask(record_crc_);
    return Append(&masked, 4);
  }
  absl::Status Record(uint32_t type, const std::string& payload) {
    RETURN_IF_ERROR(BeginRecord(type, payload.size()));
    RETURN_IF_ERROR(Append(payload.data(), payload.size()));
    return EndRecord();
  }

  absl::Status Close() {
    RETURN_IF_ERROR(Flush());
    if (::fsync(fd_) != 0) return Errno("cannot fsync", path_);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Errno("cannot close", path_);
    return absl::OkStatus();
  }

  int64_t bytes() const { return bytes_; }
  uint32_t crc() const { return file_crc_; }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;

  SnapshotFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  absl::Status Flush() {
    RETURN_IF_ERROR(WriteAll(buffer_.data(), buffer_.size()));
    buffer_.clear();
    return absl::OkStatus();
  }
  absl::Status WriteAll(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return Errno("cannot write", path_);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return absl::OkStatus();
  }

  int fd_;
  const std::string path_;
  std::string buffer_;
  uint32_t file_crc_ = 0;
  uint32_t record_crc_ = 0;
  int64_t bytes_ = 0;
};

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status MakeDirs(const std::string& dir) {
  if (dir.empty() || dir == "." || dir == "/") return absl::OkStatus();
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(dir, " exists and is not a folder"));
  }
  RETURN_IF_ERROR(MakeDirs(Dirname(dir)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Errno("cannot create", dir);
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("cannot fsync", dir);
  return absl::OkStatus();
}

std::string VariablePrefix(const ShardVariable& v) {
  internal::ByteWriter w;
  w.PutString(v.spec.name());
  w.PutU32(v.embedding ? kEmbeddingKind : kDenseKind);
  w.PutU64(v.spec.shape().dims_size());
  for (int64_t d : v.spec.shape().dims()) w.PutI64(d);
  return w.Release();
}

absl::Status WriteVariable(SnapshotFile& file, const ShardVariable& v, int num_slots) {
  std::string head = VariablePrefix(v);
  internal::ByteWriter w;
  w.PutU32(static_cast<uint32_t>(num_slots));
  if (!v.embedding) {
    const uint64_t n = static_cast<uint64_t>(v.num_elements);
    w.PutU64(n);
    head += w.Release();
    RETURN_IF_ERROR(file.BeginRecord(kVariable, head.size() + n * 4 * (1 + num_slots)));
    RETURN_IF_ERROR(file.Append(head.data(), head.size()));
    absl::Status status;
    v.dense->Visit(
        [&](absl::Span<const float> values, const std::vector<absl::Span<const float>>& slots) {
          status = file.Append(values.data(), values.size() * 4);
          for (const auto& s : slots) {
            if (status.ok()) status = file.Append(s.data(), s.size() * 4);
          }
        });
    RETURN_IF_ERROR(status);
    return file.EndRecord();
  }
  const EmbeddingTable& t = *v.table;
  const uint64_t rows = static_cast<uint64_t>(t.stats().rows);
  const uint64_t row_floats = static_cast<uint64_t>(t.row_floats());
  w.PutU64(rows);
  w.PutU64(row_floats);
  head += w.Release();
  RETURN_IF_ERROR(file.BeginRecord(kVariable, head.size() + rows * (8 + row_floats * 4)));
  RETURN_IF_ERROR(file.Append(head.data(), head.size()));
  absl::Status status;
  uint64_t visited = 0;
  t.VisitRows([&](int64_t id, const float* row) {
    ++visited;
    if (status.ok()) status = file.Append(&id, 8);
    if (status.ok()) status = file.Append(row, row_floats * 4);
  });
  RETURN_IF_ERROR(status);
  if (visited != rows) {
    return absl::InternalError("an embedding table changed while updates were paused");
  }
  return file.EndRecord();
}

// A variable's replacement contents, parsed and checked before any is
// installed.
struct ParsedVariable {
  int index = -1;
  FloatBuffer values;
  std::vector<FloatBuffer> slots;
  std::vector<int64_t> ids;
  std::vector<float> rows;
};

}  // namespace

absl::StatusOr<SnapshotInfo> WriteShardSnapshot(ParameterShard& shard, const std::string& path,
                                                int64_t global_step) {
  const std::string dir = Dirname(path);
  RETURN_IF_ERROR(MakeDirs(dir));
  const std::string temp = absl::StrCat(path, ".tmp-", ::getpid());
  ASSIGN_OR_RETURN(std::unique_ptr<SnapshotFile> file, SnapshotFile::Create(temp));

  shard.PauseUpdates();
  absl::Status status = [&]() -> absl::Status {
    const ShardCounters counters = shard.counters();
    RETURN_IF_ERROR(file->Append(kMagic, sizeof(kMagic)));
    RETURN_IF_ERROR(file->Append(&kFormatVersion, 4));
    ASSIGN_OR_RETURN(auto optimizer, Optimizer::Create(shard.request().optimizer()));
    internal::ByteWriter header;
    header.PutString(shard.job_id());
    header.PutU32(static_cast<uint32_t>(shard.shard_index()));
    header.PutU32(static_cast<uint32_t>(shard.num_shards()));
    header.PutI64(counters.version);
    header.PutI64(global_step);
    header.PutString(optimizer->name());
    header.PutU32(static_cast<uint32_t>(optimizer->num_slots()));
    header.PutU64(static_cast<uint64_t>(shard.num_variables()));
    RETURN_IF_ERROR(file->Record(kHeader, header.Release()));
    for (int i = 0; i < shard.num_variables(); ++i) {
      RETURN_IF_ERROR(WriteVariable(*file, shard.variable(i), optimizer->num_slots()));
    }
    RETURN_IF_ERROR(file->Record(kDedup, counters.dedup));
    internal::ByteWriter end;
    end.PutU64(static_cast<uint64_t>(shard.num_variables()) + 2);
    RETURN_IF_ERROR(file->Record(kEnd, end.Release()));
    return absl::OkStatus();
  }();
  const int64_t version = shard.counters().version;
  shard.ResumeUpdates();
  if (status.ok()) status = file->Close();
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = Errno("cannot rename into", path);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  RETURN_IF_ERROR(SyncDir(dir));
  return SnapshotInfo{file->bytes(), file->crc(), version};
}

namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no snapshot at ", path));
    return Errno("cannot open", path);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Errno("cannot stat", path);
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t r = ::read(fd, data.data() + done, data.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      return Errno("cannot read", path);
    }
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  return data;
}

struct RawRecord {
  uint32_t type;
  absl::string_view payload;
};

// The name at the start of a variable record, if it reads as one.
std::string NameHint(absl::string_view payload) {
  internal::ByteReader r(payload);
  std::string name;
  if (r.GetString(&name) && name.size() <= 256) return absl::StrCat(" \"", name, "\"");
  return "";
}

absl::StatusOr<std::vector<RawRecord>> SplitRecords(absl::string_view data,
                                                    const std::string& path) {
  internal::ByteReader in(data);
  char magic[8];
  uint32_t format;
  if (!in.GetRaw(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(path, " is not a shard snapshot (bad magic)"));
  }
  if (!in.GetU32(&format)) return absl::DataLossError(absl::StrCat(path, " is truncated"));
  if (format != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " has snapshot format ", format, "; this build reads ", kFormatVersion));
  }
  std::vector<RawRecord> records;
  for (int n = 0;; ++n) {
    const size_t at = data.size() - in.remaining();
    uint32_t type = 0;
    uint64_t length = 0;
    absl::string_view payload;
    uint32_t masked = 0;
    if (!in.GetU32(&type) || !in.GetU64(&length) || length > in.remaining() ||
        !in.GetView(length, &payload) || !in.GetU32(&masked)) {
      return absl::DataLossError(absl::StrCat(path, " is truncated in record ", n, " (",
                                              TypeName(type), ") at byte ", at));
    }
    uint32_t crc = Crc32c(data.substr(at, 12));
    crc = Crc32cExtend(crc, payload.data(), payload.size());
    if (crc != Crc32cUnmask(masked)) {
      return absl::DataLossError(absl::StrCat(path, ": record ", n, " (", TypeName(type),
                                              type == kVariable ? NameHint(payload) : std::string(),
                                              ") at byte ", at, " fails its checksum"));
    }
    records.push_back({type, payload});
    if (type == kEnd) break;
  }
  if (in.remaining() != 0) {
    return absl::DataLossError(
        absl::StrCat(path, " has ", in.remaining(), " bytes after its end record"));
  }
  return records;
}

}  // namespace

absl::StatusOr<SnapshotInfo> RestoreShardSnapshot(ParameterShard& shard, const std::string& path,
                                                  const RestoreExpectation& expect) {
  ASSIGN_OR_RETURN(const std::string data, ReadWholeFile(path));
  if (expect.bytes > 0 && static_cast<int64_t>(data.size()) != expect.bytes) {
    return absl::DataLossError(
        absl::StrCat(path, " has ", data.size(), " bytes; the manifest says ", expect.bytes));
  }
  const uint32_t file_crc = Crc32c(data);
  if (expect.check_crc32c && file_crc != expect.crc32c) {
    return absl::DataLossError(absl::StrCat(path, " does not match the CRC32C in the manifest"));
  }
  ASSIGN_OR_RETURN(const std::vector<RawRecord> records, SplitRecords(data, path));
  const absl::Status bad = absl::DataLossError(absl::StrCat(path, ": a record does not decode"));
  auto mismatch = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(path, " does not fit this shard: ", what));
  };

  // Header.
  if (records.empty() || records.front().type != kHeader) {
    return absl::DataLossError(absl::StrCat(path, " does not start with a header record"));
  }
  internal::ByteReader h(records.front().payload);
  std::string job, optimizer_name;
  uint32_t index, count, slots;
  int64_t version, global_step;
  uint64_t num_variables;
  if (!h.GetString(&job) || !h.GetU32(&index) || !h.GetU32(&count) || !h.GetI64(&version) ||
      !h.GetI64(&global_step) || !h.GetString(&optimizer_name) || !h.GetU32(&slots) ||
      !h.GetU64(&num_variables) || version < 0) {
    return bad;
  }
  if (static_cast<int>(index) != shard.shard_index() ||
      static_cast<int>(count) != shard.num_shards()) {
    return mismatch(absl::StrCat("it is shard ", index, " of ", count, ", this is shard ",
                                 shard.shard_index(), " of ", shard.num_shards()));
  }
  ASSIGN_OR_RETURN(auto optimizer, Optimizer::Create(shard.request().optimizer()));
  if (optimizer_name != optimizer->name() || static_cast<int>(slots) != optimizer->num_slots()) {
    return mismatch(
        absl::StrCat("it holds ", optimizer_name, " slots; the job uses ", optimizer->name()));
  }
  if (num_variables != static_cast<uint64_t>(shard.num_variables()) ||
      records.size() != num_variables + 3) {
    return mismatch(absl::StrCat("it holds ", num_variables, " variables; this shard holds ",
                                 shard.num_variables()));
  }

  // Variables, parsed into fresh buffers before anything is replaced.
  std::vector<ParsedVariable> parsed;
  std::vector<bool> seen(shard.num_variables());
  for (uint64_t r = 1; r <= num_variables; ++r) {
    if (records[r].type != kVariable) return bad;
    internal::ByteReader in(records[r].payload);
    std::string name;
    if (!in.GetString(&name)) return bad;
    absl::StatusOr<int> found = shard.FindVariable(name);
    if (!found.ok() || seen[*found]) return mismatch(absl::StrCat("variable \"", name, "\""));
    seen[*found] = true;
    const ShardVariable& v = shard.variable(*found);
    const std::string prefix = VariablePrefix(v);
    internal::ByteReader whole(records[r].payload);
    absl::string_view head;
    if (!whole.GetView(prefix.size(), &head) || head != prefix) {
      return mismatch(absl::StrCat("variable \"", name, "\" has another kind or shape"));
    }
    uint32_t num_slots;
    if (!whole.GetU32(&num_slots) || num_slots != slots) return bad;
    ParsedVariable p;
    p.index = *found;
    if (!v.embedding) {
      uint64_t n;
      if (!whole.GetU64(&n) || n != static_cast<uint64_t>(v.num_elements) ||
          whole.remaining() != n * 4 * (1 + num_slots)) {
        return bad;
      }
      p.values = FloatBuffer(v.num_elements);
      whole.GetRaw(p.values.data(), n * 4);
      for (uint32_t k = 0; k < num_slots; ++k) {
        p.slots.emplace_back(v.num_elements);
        whole.GetRaw(p.slots.back().data(), n * 4);
      }
    } else {
      uint64_t rows, row_floats;
      if (!whole.GetU64(&rows) || !whole.GetU64(&row_floats) ||
          row_floats != static_cast<uint64_t>(v.table->row_floats()) ||
          whole.remaining() != rows * (8 + row_floats * 4)) {
        return bad;
      }
      p.ids.resize(rows);
      p.rows.resize(rows * row_floats);
      for (uint64_t i = 0; i < rows; ++i) {
        whole.GetRaw(&p.ids[i], 8);
        whole.GetRaw(p.rows.data() + i * row_floats, row_floats * 4);
      }
    }
    parsed.push_back(std::move(p));
  }
  if (records[num_variables + 1].type != kDedup) return bad;
  ShardCounters counters;
  counters.version = version;
  counters.dedup = std::string(records[num_variables + 1].payload);
  // Decoded once here so that a bad dedup record refuses the file before
  // anything is replaced.
  RETURN_IF_ERROR(PushDedup::Parse(counters.dedup, 1).status());
  internal::ByteReader end(records.back().payload);
  uint64_t record_count;
  if (!end.GetU64(&record_count) || record_count != records.size() - 1) return bad;

  shard.PauseUpdates();
  for (ParsedVariable& p : parsed) {
    const ShardVariable& v = shard.variable(p.index);
    if (v.embedding) {
      v.table->Replace(p.ids, p.rows);
    } else {
      v.dense->Replace(std::move(p.values), std::move(p.slots));
    }
  }
  absl::Status status = shard.RestoreCounters(counters);
  shard.ResumeUpdates();
  RETURN_IF_ERROR(status);
  return SnapshotInfo{static_cast<int64_t>(data.size()), file_crc, version};
}

}  // namespace pstrain
