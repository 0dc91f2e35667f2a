#ifndef PSTRAIN_COMMON_EXPORT_CHECKSUMMED_FILE_H_
#define PSTRAIN_COMMON_EXPORT_CHECKSUMMED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/export/export_manifest.pb.h"

namespace pstrain {

// A file of an export being written whole, with its running size and
// CRC32C: what its MANIFEST entry records. Not thread-safe.
class ChecksummedFile {
 public:
  // Creates `name` in `dir` (replacing a file there).
  static absl::StatusOr<ChecksummedFile> Create(Env& env, const std::string& dir,
                                                const std::string& name);

  absl::Status Append(const void* data, size_t n);

  // Syncs and closes; returns the file's entry for the MANIFEST.
  absl::StatusOr<ExportedFile> Finish();

  int64_t bytes() const { return bytes_; }

 private:
  ChecksummedFile(std::unique_ptr<WritableFile> file, std::string name)
      : file_(std::move(file)), name_(std::move(name)) {}

  std::unique_ptr<WritableFile> file_;
  std::string name_;
  uint32_t crc_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_CHECKSUMMED_FILE_H_
