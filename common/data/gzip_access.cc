#include "common/data/gzip_access.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checksum/crc32c.h"
#include "common/data/file_patterns.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr size_t kInputBytes = size_t{64} << 10;
// Deflate's largest distance back: what an access point must remember.
constexpr size_t kWindowBytes = size_t{32} << 10;
// inflateInit2's window bits: 15, plus 32 to read a gzip (or zlib) header,
// or negated for raw deflate data (from an access point, inside a member).
constexpr int kHeaderWindowBits = 15 + 32;
constexpr int kRawWindowBits = -15;
// A gzip member ends in 8 bytes (CRC-32 and size) that raw inflation does
// not read.
constexpr int kTrailerBytes = 8;
// Boundaries noted ahead of the stream's reader: a few MiB of stream.
constexpr size_t kMaxBoundaries = 64;

// Reads up to `n` bytes of `file` into `buffer`, copying them there if the
// file returned them elsewhere.
absl::StatusOr<size_t> ReadInto(SequentialFile& file, char* buffer, size_t n) {
  ASSIGN_OR_RETURN(absl::string_view read, file.Read(n, buffer));
  if (!read.empty() && read.data() != buffer) std::copy(read.begin(), read.end(), buffer);
  return read.size();
}

}  // namespace

struct GzipIndexingFile::Stream {
  z_stream z = {};
};

std::string GzipWindowsPath(const std::string& path) {
  return absl::StrCat(RecordIndexPath(path), ".gzip-windows");
}

absl::StatusOr<std::unique_ptr<GzipIndexingFile>> GzipIndexingFile::Open(Env& env,
                                                                         const std::string& path,
                                                                         int64_t min_span,
                                                                         WritableFile* windows) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  return std::unique_ptr<GzipIndexingFile>(
      new GzipIndexingFile(std::move(file), path, min_span, windows));
}

GzipIndexingFile::GzipIndexingFile(std::unique_ptr<SequentialFile> file, std::string path,
                                   int64_t min_span, WritableFile* windows)
    : file_(std::move(file)),
      path_(std::move(path)),
      min_span_(min_span),
      windows_(windows),
      stream_(std::make_unique<Stream>()),
      input_(kInputBytes),
      history_(kWindowBytes) {
  // Fails only without memory for zlib's state, which is fatal anyway.
  if (inflateInit2(&stream_->z, kHeaderWindowBits) != Z_OK) std::abort();
}

GzipIndexingFile::~GzipIndexingFile() { inflateEnd(&stream_->z); }

absl::Status GzipIndexingFile::Broken(absl::string_view reason) const {
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ": gzip data breaks after ", inflated_, " inflated bytes: ", reason));
}

void GzipIndexingFile::Remember(const char* bytes, size_t n) {
  if (n >= kWindowBytes) {
    std::copy(bytes + n - kWindowBytes, bytes + n, history_.begin());
    history_next_ = 0;
    return;
  }
  const size_t first = std::min(n, kWindowBytes - history_next_);
  std::copy(bytes, bytes + first, history_.begin() + history_next_);
  std::copy(bytes + first, bytes + n, history_.begin());
  history_next_ = (history_next_ + n) % kWindowBytes;
}

void GzipIndexingFile::NoteBoundary() {
  const z_stream& z = stream_->z;
  Boundary boundary;
  boundary.stream_offset = inflated_;
  boundary.file_offset = input_offset_ + (reinterpret_cast<const char*>(z.next_in) - input_.data());
  boundary.bits = z.data_type & 7;
  // The window, oldest byte first: what came before, up to 32 KiB.
  const size_t size = static_cast<size_t>(std::min<int64_t>(inflated_, kWindowBytes));
  boundary.window.resize(size);
  const size_t start = (history_next_ + kWindowBytes - size) % kWindowBytes;
  const size_t first = std::min(size, kWindowBytes - start);
  std::copy(history_.begin() + start, history_.begin() + start + first, boundary.window.begin());
  std::copy(history_.begin(), history_.begin() + (size - first), boundary.window.begin() + first);
  boundaries_.push_back(std::move(boundary));
  // The oldest goes, except the stream's start while no point exists: the
  // first block may start after a long header, and needs a point before it.
  if (boundaries_.size() > kMaxBoundaries) {
    boundaries_.erase(boundaries_.begin() + (points_.empty() ? 1 : 0));
  }
}

absl::Status GzipIndexingFile::MarkBlockStart(int64_t stream_offset) {
  // The last boundary at or before the start.
  auto after = std::upper_bound(
      boundaries_.begin(), boundaries_.end(), stream_offset,
      [](int64_t offset, const Boundary& boundary) { return offset < boundary.stream_offset; });
  if (after == boundaries_.begin()) return absl::OkStatus();
  const Boundary& boundary = *(after - 1);
  if (points_.empty() || boundary.stream_offset - points_.back().stream_offset() >= min_span_) {
    RETURN_IF_ERROR(AddPoint(boundary));
  }
  boundaries_.erase(boundaries_.begin(), after);
  return absl::OkStatus();
}

absl::Status GzipIndexingFile::AddPoint(const Boundary& boundary) {
  GzipAccessPoint point;
  point.set_stream_offset(boundary.stream_offset);
  point.set_file_offset(boundary.file_offset);
  point.set_bits(boundary.bits);
  const std::string& window = boundary.window;
  const size_t size = window.size();
  uLongf stored_bytes = compressBound(static_cast<uLong>(size));
  std::string stored(stored_bytes, '\0');
  if (compress2(reinterpret_cast<Bytef*>(&stored[0]), &stored_bytes,
                reinterpret_cast<const Bytef*>(window.data()), static_cast<uLong>(size),
                Z_DEFAULT_COMPRESSION) != Z_OK) {
    return absl::InternalError(absl::StrCat(path_, ": cannot deflate an access window"));
  }
  stored.resize(stored_bytes);
  RETURN_IF_ERROR(windows_->Append(stored));
  point.set_window_offset(windows_bytes_);
  point.set_window_stored_bytes(static_cast<int32_t>(stored.size()));
  point.set_window_crc32c(Crc32c(stored));
  point.set_window_bytes(static_cast<int32_t>(size));
  windows_bytes_ += static_cast<int64_t>(stored.size());
  points_.push_back(std::move(point));
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> GzipIndexingFile::Read(size_t n, char* scratch) {
  z_stream& z = stream_->z;
  // zlib counts in 32 bits.
  const uInt wanted = static_cast<uInt>(std::min<size_t>(n, uInt{1} << 30));
  uInt produced = 0;
  while (produced == 0 && wanted > 0) {
    if (z.avail_in == 0 && !input_ended_) {
      ASSIGN_OR_RETURN(const size_t read, ReadInto(*file_, input_.data(), input_.size()));
      input_offset_ = input_end_;
      input_end_ += static_cast<int64_t>(read);
      input_ended_ = read == 0;
      z.next_in = reinterpret_cast<Bytef*>(input_.data());
      z.avail_in = static_cast<uInt>(read);
    }
    if (z.avail_in == 0) {
      if (in_member_) return Broken("the file ends inside a gzip member (truncated)");
      break;
    }
    in_member_ = true;
    z.next_out = reinterpret_cast<Bytef*>(scratch + produced);
    z.avail_out = wanted - produced;
    // Z_BLOCK stops at each deflate block's end, where a point may go.
    const int result = inflate(&z, Z_BLOCK);
    const uInt got = (wanted - produced) - z.avail_out;
    Remember(scratch + produced, got);
    produced += got;
    inflated_ += got;
    if (result == Z_STREAM_END) {
      // Another member may follow.
      in_member_ = false;
      inflateReset(&z);
      continue;
    }
    if (result != Z_OK && result != Z_BUF_ERROR) {
      return Broken(z.msg != nullptr ? z.msg : "corrupt compressed data");
    }
    // At a block boundary (bit 7), not after the member's last block (bit
    // 6): inflation can start here.
    if ((z.data_type & 128) != 0 && (z.data_type & 64) == 0) NoteBoundary();
  }
  return absl::string_view(scratch, produced);
}

absl::Status GzipIndexingFile::Skip(uint64_t n) {
  std::vector<char> discard(std::min<uint64_t>(n, kInputBytes));
  while (n > 0) {
    ASSIGN_OR_RETURN(
        absl::string_view piece,
        Read(static_cast<size_t>(std::min<uint64_t>(n, discard.size())), discard.data()));
    if (piece.empty()) return absl::OkStatus();
    n -= piece.size();
  }
  return absl::OkStatus();
}

const GzipAccessPoint* AccessPointBefore(const std::vector<GzipAccessPoint>& points,
                                         int64_t offset) {
  auto after = std::upper_bound(
      points.begin(), points.end(), offset,
      [](int64_t value, const GzipAccessPoint& point) { return value < point.stream_offset(); });
  return after == points.begin() ? nullptr : &*(after - 1);
}

absl::StatusOr<std::string> ReadStoredWindow(Env& env, const std::string& windows_path,
                                             const GzipAccessPoint& point) {
  std::string stored(static_cast<size_t>(std::max(point.window_stored_bytes(), 0)), '\0');
  const absl::Status read = ReadFileRange(env, windows_path, point.window_offset(), &stored);
  if (absl::IsDataLoss(read) || (read.ok() && Crc32c(stored) != point.window_crc32c())) {
    return absl::DataLossError(absl::StrCat(windows_path, ": the access window at offset ",
                                            point.window_offset(), " is damaged"));
  }
  RETURN_IF_ERROR(read);
  return stored;
}

namespace {

// DataLoss for a read from `point` of the file at `path`.
struct LostAt {
  const std::string& path;
  const GzipAccessPoint& point;

  absl::Status operator()(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(path, ": ", what, " (reading from its access point at ",
                                            "stream offset ", point.stream_offset(), ")"));
  }
};

// The 32 KiB of history `point` starts from, from its stored (compressed)
// form.
absl::StatusOr<std::string> InflateWindow(const GzipAccessPoint& point,
                                          absl::string_view stored_window, const LostAt& lost) {
  if (Crc32c(stored_window) != point.window_crc32c()) return lost("its access window is damaged");
  std::string window(static_cast<size_t>(std::max(point.window_bytes(), 0)), '\0');
  uLongf window_bytes = static_cast<uLongf>(window.size());
  if (uncompress(reinterpret_cast<Bytef*>(&window[0]), &window_bytes,
                 reinterpret_cast<const Bytef*>(stored_window.data()),
                 static_cast<uLong>(stored_window.size())) != Z_OK ||
      window_bytes != window.size()) {
    return lost("its access window does not inflate");
  }
  return window;
}

// Inflates `file` with `z` (primed at an access point) until *into is
// full, dropping the first `to_skip` bytes, across gzip members.
absl::Status InflateInto(SequentialFile& file, z_stream& z, int64_t to_skip, std::string* into,
                         const LostAt& lost) {
  std::vector<char> input(kInputBytes);
  // Inflated bytes before the read's offset go here, then into *into.
  std::vector<char> discard(kInputBytes);
  size_t filled = 0;
  bool raw = true;
  int trailer_left = 0;  // bytes of a member's trailer still to pass over
  bool input_ended = false;
  while (filled < into->size()) {
    if (z.avail_in == 0) {
      if (input_ended) return lost("the stream ends before the bytes its index says it holds");
      ASSIGN_OR_RETURN(const size_t read, ReadInto(file, input.data(), input.size()));
      input_ended = read == 0;
      z.next_in = reinterpret_cast<Bytef*>(input.data());
      z.avail_in = static_cast<uInt>(read);
      continue;
    }
    if (trailer_left > 0) {
      const uInt passed = std::min<uInt>(z.avail_in, static_cast<uInt>(trailer_left));
      z.next_in += passed;
      z.avail_in -= passed;
      trailer_left -= static_cast<int>(passed);
      continue;
    }
    char* const out = to_skip > 0 ? discard.data() : &(*into)[filled];
    const size_t room = to_skip > 0
                            ? static_cast<size_t>(std::min<int64_t>(to_skip, discard.size()))
                            : into->size() - filled;
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = static_cast<uInt>(std::min<size_t>(room, uInt{1} << 30));
    const uInt before = z.avail_out;
    const int result = inflate(&z, Z_NO_FLUSH);
    const uInt got = before - z.avail_out;
    if (to_skip > 0) {
      to_skip -= got;
    } else {
      filled += got;
    }
    if (result == Z_STREAM_END) {
      // The member ends; another may follow, header and all.
      if (raw) trailer_left = kTrailerBytes;
      raw = false;
      inflateReset2(&z, kHeaderWindowBits);
    } else if (result != Z_OK && result != Z_BUF_ERROR) {
      return lost(absl::StrCat("corrupt compressed data: ", z.msg != nullptr ? z.msg : "?"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadGzipAt(Env& env, const std::string& path, const GzipAccessPoint& point,
                        absl::string_view stored_window, int64_t offset, std::string* into) {
  const LostAt lost{path, point};
  if (offset < point.stream_offset()) return lost("a read before its access point");
  ASSIGN_OR_RETURN(const std::string window, InflateWindow(point, stored_window, lost));
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  const int64_t start = point.file_offset() - (point.bits() > 0 ? 1 : 0);
  if (start < 0) return lost("an access point before the file's start");
  RETURN_IF_ERROR(file->Skip(static_cast<uint64_t>(start)));
  z_stream z = {};
  if (inflateInit2(&z, kRawWindowBits) != Z_OK) std::abort();
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  if (point.bits() > 0) {
    char byte = 0;
    ASSIGN_OR_RETURN(const size_t read, ReadInto(*file, &byte, 1));
    if (read != 1) return lost("the file ends before its access point");
    inflatePrime(&z, point.bits(), static_cast<unsigned char>(byte) >> (8 - point.bits()));
  }
  inflateSetDictionary(&z, reinterpret_cast<const Bytef*>(window.data()),
                       static_cast<uInt>(window.size()));
  return InflateInto(*file, z, offset - point.stream_offset(), into, lost);
}

}  // namespace pstrain
