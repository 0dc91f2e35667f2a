#ifndef PSTRAIN_COMMON_DATA_GZIP_ACCESS_H_
#define PSTRAIN_COMMON_DATA_GZIP_ACCESS_H_

// Reading a gzipped file from the middle. A gzip stream can only be inflated
// from its start, except at the access points found while inflating it once
// (zlib's zran method): a deflate block boundary (a file offset and a bit
// within its byte) with the 32 KiB of output before it, which the blocks
// after it may refer back to. With a point at the deflate boundary before
// each block of records, a read of a block inflates at most one deflate
// block (tens of KiB) it does not need, instead of the file up to it.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "protos/data_index.pb.h"

namespace pstrain {

// Stream bytes between access points, at least: blocks of records smaller
// than this share points, so that the windows stay a few percent of the
// stream.
inline constexpr int64_t kGzipAccessSpan = int64_t{64} << 10;

// The path of the file that keeps `path`'s access windows.
std::string GzipWindowsPath(const std::string& path);

// The stream a gzipped file inflates to, read from its start. It notes
// each deflate block boundary it passes, with its window; the reader of the
// stream says where its blocks of records start (MarkBlockStart), and the
// boundary before each start becomes an access point, its window deflated
// and appended to `windows`. Concatenated members read as one stream. Not
// thread-safe.
class GzipIndexingFile final : public SequentialFile {
 public:
  // Points are at least `min_span` stream bytes apart. `windows` must
  // outlive this.
  static absl::StatusOr<std::unique_ptr<GzipIndexingFile>> Open(Env& env, const std::string& path,
                                                                int64_t min_span,
                                                                WritableFile* windows);
  ~GzipIndexingFile() override;

  // InvalidArgument naming the file: data that is not gzip or is corrupt,
  // or a stream that ends inside a member. The windows file's errors.
  absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) override;
  absl::Status Skip(uint64_t n) override;

  // A block of records starts at `stream_offset`, already read: the last
  // boundary at or before it becomes an access point, unless the previous
  // point is nearer than min_span (reads from there cost little more) or
  // the boundary is no longer noted (the reader lags more than 64
  // boundaries behind; the previous point serves). The windows file's
  // errors.
  absl::Status MarkBlockStart(int64_t stream_offset);

  // The points so far, in stream order, and the bytes inflated.
  const std::vector<GzipAccessPoint>& points() const { return points_; }
  int64_t inflated() const { return inflated_; }

 private:
  struct Stream;
  // A deflate block boundary passed, and the stream's 32 KiB before it.
  struct Boundary {
    int64_t stream_offset = 0;
    int64_t file_offset = 0;
    int bits = 0;
    std::string window;
  };
  GzipIndexingFile(std::unique_ptr<SequentialFile> file, std::string path, int64_t min_span,
                   WritableFile* windows);
  void NoteBoundary();
  absl::Status AddPoint(const Boundary& boundary);
  void Remember(const char* bytes, size_t n);
  absl::Status Broken(absl::string_view reason) const;

  std::unique_ptr<SequentialFile> file_;
  const std::string path_;
  const int64_t min_span_;
  WritableFile* const windows_;
  std::unique_ptr<Stream> stream_;
  std::vector<char> input_;
  int64_t input_offset_ = 0;  // the file offset of input_[0]
  int64_t input_end_ = 0;     // the file offset after what was read
  bool input_ended_ = false;
  bool in_member_ = false;
  int64_t inflated_ = 0;
  // The last 32 KiB of output, a ring: history_[history_next_] is the oldest.
  std::vector<char> history_;
  size_t history_next_ = 0;
  // The boundaries after the last point, oldest first.
  std::deque<Boundary> boundaries_;
  std::vector<GzipAccessPoint> points_;
  int64_t windows_bytes_ = 0;
};

// The window of `point` as stored (deflated) in `windows_path`.
// DataLoss: the file does not hold it (its CRC does not match).
absl::StatusOr<std::string> ReadStoredWindow(Env& env, const std::string& windows_path,
                                             const GzipAccessPoint& point);

// Reads stream bytes [offset, offset + into->size()) of gzipped file `path`
// into *into, inflating from `point` (the last access point at or before
// `offset`), whose window is `stored_window` (deflated, as stored).
// DataLoss naming the file: the file or the window no longer holds what
// the point says, or the stream ends first.
absl::Status ReadGzipAt(Env& env, const std::string& path, const GzipAccessPoint& point,
                        absl::string_view stored_window, int64_t offset, std::string* into);

// The last of `points` (in stream order) at or before `offset`; null when
// there is none.
const GzipAccessPoint* AccessPointBefore(const std::vector<GzipAccessPoint>& points,
                                         int64_t offset);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_GZIP_ACCESS_H_
