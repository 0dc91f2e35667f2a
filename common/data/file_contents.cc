#include "common/data/file_contents.h"

#include <errno.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// Deflate expands at most about 1032:1, so a trailer claiming more than
// that of the compressed bytes is wrong (a damaged or crafted file) and is
// not trusted with a mapping of its size.
constexpr size_t kMaxDeflateRatio = 1032;

// How many bytes the file at `file` most likely holds once read: a gzip
// file's trailer records the size of its (last) member modulo 2^32, a plain
// file's size is its length. Only a hint: the reader grows past it.
size_t ExpectedSize(const std::string& file) {
  FILE* in = std::fopen(file.c_str(), "rb");
  if (in == nullptr) return 0;
  size_t expected = 0;
  unsigned char magic[2] = {0, 0};
  const bool gzip = std::fread(magic, 1, 2, in) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (std::fseek(in, 0, SEEK_END) == 0) {
    const long length = std::ftell(in);
    unsigned char trailer[4];
    if (!gzip) {
      if (length > 0) expected = static_cast<size_t>(length);
    } else if (length >= 4 && std::fseek(in, -4, SEEK_END) == 0 &&
               std::fread(trailer, 1, 4, in) == 4) {
      const size_t recorded = size_t{trailer[0]} | size_t{trailer[1]} << 8 |
                              size_t{trailer[2]} << 16 | size_t{trailer[3]} << 24;
      expected = std::min(recorded, static_cast<size_t>(length) * kMaxDeflateRatio);
    }
  }
  std::fclose(in);
  return expected;
}

}  // namespace

absl::StatusOr<ByteBuffer> ReadFileContents(absl::string_view path) {
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
  // One byte past the expected size, so that reaching the end needs no
  // second buffer.
  ByteBuffer contents(ExpectedSize(file) + 1);
  size_t used = 0;
  while (true) {
    if (used == contents.size()) {
      ByteBuffer larger(std::max<size_t>(contents.size() * 2, 1 << 16));
      std::memcpy(larger.data(), contents.data(), used);
      contents = std::move(larger);
    }
    // gzread takes at most INT_MAX bytes at a time.
    const unsigned want = static_cast<unsigned>(std::min<size_t>(contents.size() - used, 1 << 30));
    const int read = gzread(in, contents.data() + used, want);
    if (read < 0) {
      int code = 0;
      const std::string reason = gzerror(in, &code);
      gzclose(in);
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": corrupt compressed data near offset ", used, ": ", reason));
    }
    if (read == 0) break;
    used += static_cast<size_t>(read);
  }
  contents.Truncate(used);
  // A truncated gzip stream reads as end of file; zlib records the error.
  int code = 0;
  const std::string reason = gzerror(in, &code);
  gzclose(in);
  if (code != Z_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": compressed data ends early at offset ", used, ": ", reason));
  }
  return contents;
}

}  // namespace pstrain
