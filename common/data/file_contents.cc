#include "common/data/file_contents.h"

#include <errno.h>
#include <zlib.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<std::string> ReadFileContents(absl::string_view path) {
  const std::string file(path);
  gzFile in = gzopen(file.c_str(), "rb");
  if (in == nullptr) {
    const int error = errno;
    const std::string message = absl::StrCat(file, ": ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    if (error == EACCES) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  }
  gzbuffer(in, 1 << 17);
  std::string contents;
  constexpr size_t kChunk = 1 << 20;
  while (true) {
    const size_t old_size = contents.size();
    contents.resize(old_size + kChunk);
    const int read = gzread(in, &contents[old_size], kChunk);
    if (read < 0) {
      int code = 0;
      const std::string reason = gzerror(in, &code);
      gzclose(in);
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": corrupt compressed data near offset ", old_size, ": ", reason));
    }
    contents.resize(old_size + static_cast<size_t>(read));
    if (read == 0) break;
  }
  // A truncated gzip stream reads as end of file; zlib records the error.
  int code = 0;
  const std::string reason = gzerror(in, &code);
  gzclose(in);
  if (code != Z_OK) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": compressed data ends early at offset ",
                                                   contents.size(), ": ", reason));
  }
  return contents;
}

}  // namespace pstrain
