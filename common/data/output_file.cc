#include "common/data/output_file.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {

void OutputFile::DeflateEnd::operator()(z_stream* z) const {
  deflateEnd(z);
  delete z;
}

absl::StatusOr<OutputFile> OutputFile::Open(Env& env, const std::string& path, bool gzip) {
  OutputFile out;
  out.path_ = path;
  ASSIGN_OR_RETURN(out.file_, env.NewWritableFile(path));
  if (gzip) {
    out.deflate_.reset(new z_stream());
    // windowBits 16 + 15: a gzip wrapper; level 6, zlib's default.
    if (deflateInit2(out.deflate_.get(), 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      return absl::InternalError(absl::StrCat(path, ": zlib cannot start a gzip stream"));
    }
  }
  return out;
}

absl::Status OutputFile::Close() {
  if (deflate_ != nullptr) {
    RETURN_IF_ERROR(Feed("", Z_FINISH));
    deflate_.reset();
  }
  return file_->Close();
}

absl::Status OutputFile::Feed(absl::string_view bytes, int flush) {
  if (deflate_ == nullptr) return file_->Append(bytes);
  z_stream& z = *deflate_;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char out[1 << 16];
  int result = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof(out);
    result = deflate(&z, flush);
    if (result == Z_STREAM_ERROR) {
      return absl::InternalError(absl::StrCat(path_, ": zlib refused the data"));
    }
    RETURN_IF_ERROR(file_->Append(absl::string_view(out, sizeof(out) - z.avail_out)));
  } while (z.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END));
  return absl::OkStatus();
}

}  // namespace pstrain
