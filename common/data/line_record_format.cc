#include "common/data/line_record_format.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/data/gzip_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

// `line` without a '\r' that ended it.
absl::string_view WithoutCarriageReturn(absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

absl::StatusOr<bool> LineRecordFormat::IsGzipped(Env& env, const std::string& path) const {
  return IsGzipFile(env, path);
}

absl::Status LineRecordFormat::Scan(SequentialFile& file, const std::string& path,
                                    RecordVisitor visit) const {
  // buffer[begin, end) holds the bytes from file offset `offset` not yet
  // split into lines.
  std::string buffer(kChunkBytes, '\0');
  size_t begin = 0, end = 0;
  int64_t offset = 0;
  int64_t line_number = 0;
  bool header_pending = has_header();
  bool at_end = false;
  while (!at_end || begin < end) {
    const char* const newline =
        static_cast<const char*>(std::memchr(buffer.data() + begin, '\n', end - begin));
    if (newline == nullptr && !at_end) {
      // Keep the partial line at the buffer's start and read more after it.
      if (begin > 0) {
        std::copy(buffer.begin() + begin, buffer.begin() + end, buffer.begin());
        end -= begin;
        begin = 0;
      }
      if (end == buffer.size()) {
        if (static_cast<int64_t>(buffer.size()) >= kMaxLineBytes) {
          return LineTooLong(path, line_number + 1);
        }
        buffer.resize(2 * buffer.size());
      }
      ASSIGN_OR_RETURN(absl::string_view read, file.Read(buffer.size() - end, &buffer[end]));
      if (read.empty()) at_end = true;
      if (read.data() != &buffer[end]) std::copy(read.begin(), read.end(), &buffer[end]);
      end += read.size();
      continue;
    }
    const size_t line_end = newline == nullptr ? end : static_cast<size_t>(newline - buffer.data());
    const absl::string_view line =
        WithoutCarriageReturn(absl::string_view(buffer.data() + begin, line_end - begin));
    ++line_number;
    if (IsRecord(line)) {
      if (header_pending) {
        header_pending = false;
      } else {
        absl::Status visited = visit(line, offset);
        if (!visited.ok()) {
          return absl::Status(visited.code(),
                              absl::StrCat(path, ":", line_number, ": ", visited.message()));
        }
      }
    }
    const size_t consumed = std::min(line_end + 1, end) - begin;
    offset += static_cast<int64_t>(consumed);
    begin += consumed;
  }
  return absl::OkStatus();
}

absl::Status LineRecordFormat::Split(absl::string_view bytes, int64_t offset,
                                     RecordVisitor visit) const {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const size_t length = newline == absl::string_view::npos ? bytes.size() : newline;
    const absl::string_view line = WithoutCarriageReturn(bytes.substr(0, length));
    if (IsRecord(line)) RETURN_IF_ERROR(visit(line, offset));
    const size_t consumed = std::min(length + 1, bytes.size());
    bytes.remove_prefix(consumed);
    offset += static_cast<int64_t>(consumed);
  }
  return absl::OkStatus();
}

}  // namespace pstrain
