#include "common/export/checksummed_file.h"

#include <utility>

#include "common/checkpoint/file_path.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<ChecksummedFile> ChecksummedFile::Create(Env& env, const std::string& dir,
                                                        const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env.NewWritableFile(JoinPath(dir, name)));
  return ChecksummedFile(std::move(file), name);
}

absl::Status ChecksummedFile::Append(const void* data, size_t n) {
  const char* bytes = static_cast<const char*>(data);
  crc_ = Crc32cExtend(crc_, bytes, n);
  bytes_ += static_cast<int64_t>(n);
  return file_->Append(absl::string_view(bytes, n));
}

absl::StatusOr<ExportedFile> ChecksummedFile::Finish() {
  RETURN_IF_ERROR(file_->Sync());
  RETURN_IF_ERROR(file_->Close());
  ExportedFile entry;
  entry.set_name(name_);
  entry.set_bytes(bytes_);
  entry.set_crc32c(crc_);
  return entry;
}

}  // namespace pstrain
