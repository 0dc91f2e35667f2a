#include "common/data/gzip_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr size_t kInputBufferBytes = size_t{1} << 17;
// zlib's windowBits for a gzip wrapper (and no zlib or raw deflate).
constexpr int kGzipWindowBits = 16 + MAX_WBITS;

}  // namespace

struct GzipSequentialFile::Stream {
  z_stream z = {};
};

absl::StatusOr<bool> IsGzipFile(Env& env, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  if (!file.ok()) return file.status();
  char magic[2];
  size_t got = 0;
  while (got < sizeof(magic)) {
    absl::StatusOr<absl::string_view> piece = (*file)->Read(sizeof(magic) - got, magic + got);
    if (!piece.ok()) return piece.status();
    if (piece->empty()) return false;
    got += piece->size();
  }
  return static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}

std::unique_ptr<GzipSequentialFile> GzipSequentialFile::Create(
    std::unique_ptr<SequentialFile> compressed, std::string file_name) {
  return std::unique_ptr<GzipSequentialFile>(
      new GzipSequentialFile(std::move(compressed), std::move(file_name)));
}

GzipSequentialFile::GzipSequentialFile(std::unique_ptr<SequentialFile> compressed,
                                       std::string file_name)
    : compressed_(std::move(compressed)),
      file_name_(std::move(file_name)),
      stream_(std::make_unique<Stream>()),
      input_(kInputBufferBytes) {
  // Fails only without memory for zlib's state, which is fatal anyway.
  const int init = inflateInit2(&stream_->z, kGzipWindowBits);
  if (init != Z_OK) std::abort();
}

GzipSequentialFile::~GzipSequentialFile() { inflateEnd(&stream_->z); }

absl::Status GzipSequentialFile::Broken(absl::string_view reason) const {
  return absl::InvalidArgumentError(absl::StrCat(file_name_, ": gzip data breaks after ", inflated_,
                                                 " inflated bytes: ", reason));
}

absl::StatusOr<absl::string_view> GzipSequentialFile::Read(size_t n, char* scratch) {
  z_stream& z = stream_->z;
  z.next_out = reinterpret_cast<Bytef*>(scratch);
  // zlib counts in 32 bits.
  z.avail_out = static_cast<uInt>(std::min<size_t>(n, uInt{1} << 30));
  const uInt wanted = z.avail_out;
  while (z.avail_out == wanted && wanted > 0) {
    if (z.avail_in == 0 && !input_ended_) {
      absl::StatusOr<absl::string_view> piece = compressed_->Read(input_.size(), input_.data());
      if (!piece.ok()) return piece.status();
      input_ended_ = piece->empty();
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece->data()));
      z.avail_in = static_cast<uInt>(piece->size());
    }
    if (z.avail_in == 0) {
      if (in_member_) return Broken("the file ends inside a gzip member (truncated)");
      break;
    }
    in_member_ = true;
    const int result = inflate(&z, Z_NO_FLUSH);
    if (result == Z_STREAM_END) {
      // Another member may follow.
      in_member_ = false;
      inflateReset(&z);
    } else if (result != Z_OK && result != Z_BUF_ERROR) {
      return Broken(z.msg != nullptr ? z.msg : "corrupt compressed data");
    }
  }
  const size_t produced = wanted - z.avail_out;
  inflated_ += static_cast<int64_t>(produced);
  return absl::string_view(scratch, produced);
}

absl::Status GzipSequentialFile::Skip(uint64_t n) {
  std::vector<char> discard(std::min<uint64_t>(n, kInputBufferBytes));
  while (n > 0) {
    absl::StatusOr<absl::string_view> piece =
        Read(static_cast<size_t>(std::min<uint64_t>(n, discard.size())), discard.data());
    if (!piece.ok()) return piece.status();
    if (piece->empty()) return absl::OkStatus();
    n -= piece->size();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SequentialFile>> OpenSequentialFile(Env& env,
                                                                   const std::string& path,
                                                                   bool gzip) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  if (!file.ok() || !gzip) return file;
  return std::unique_ptr<SequentialFile>(GzipSequentialFile::Create(std::move(*file), path));
}

}  // namespace pstrain
