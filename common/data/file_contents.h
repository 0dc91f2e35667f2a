#ifndef PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_
#define PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/byte_buffer.h"

namespace pstrain {

// Returns the whole contents of the file at `path`, gunzipped if it is a gzip
// file (plain files are returned as they are). The bytes are decompressed
// straight into a buffer sized from the file (a gzip trailer records its
// uncompressed size), so a large file is neither copied nor regrown.
// NotFound: no such file. PermissionDenied: not readable.
// InvalidArgument: a corrupt or truncated gzip stream (the message names the
// file and the decompressed offset where it broke).
absl::StatusOr<ByteBuffer> ReadFileContents(absl::string_view path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_
