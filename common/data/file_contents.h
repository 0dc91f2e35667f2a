#ifndef PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_
#define PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// Returns the whole contents of the file at `path`, gunzipped if it is a gzip
// file (plain files are returned as they are).
// NotFound: no such file. PermissionDenied: not readable.
// InvalidArgument: a corrupt or truncated gzip stream (the message names the
// file and the decompressed offset where it broke).
absl::StatusOr<std::string> ReadFileContents(absl::string_view path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_FILE_CONTENTS_H_
