#ifndef PSTRAIN_COMMON_DATA_OUTPUT_FILE_H_
#define PSTRAIN_COMMON_DATA_OUTPUT_FILE_H_

// A data file written through the Env, plain or as one gzip stream: where
// the project's data writers (TFRecord files, Criteo logs) put their bytes.

#include <zlib.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"

namespace pstrain {

class OutputFile {
 public:
  // Creates (or truncates) `path`; with `gzip`, what is written is
  // compressed at zlib's default level, in a gzip wrapper.
  // Errors: the Env's, naming the file; Internal if zlib cannot start.
  static absl::StatusOr<OutputFile> Open(Env& env, const std::string& path, bool gzip);

  absl::Status Write(absl::string_view bytes) { return Feed(bytes, Z_NO_FLUSH); }

  // Ends the gzip stream and closes the file; its errors.
  absl::Status Close();

 private:
  // Ends a gzip stream's zlib state, also when writing stopped on an error.
  struct DeflateEnd {
    void operator()(z_stream* z) const;
  };

  absl::Status Feed(absl::string_view bytes, int flush);

  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<z_stream, DeflateEnd> deflate_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_OUTPUT_FILE_H_
