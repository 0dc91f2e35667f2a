#ifndef PSTRAIN_COMMON_DATA_GZIP_FILE_H_
#define PSTRAIN_COMMON_DATA_GZIP_FILE_H_

// Reading gzipped files as a stream: a buffer of compressed bytes at a time,
// never the whole file in memory.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// Whether `path` starts with gzip's magic bytes (1f 8b). Errors: the Env's
// (NotFound: no such file).
absl::StatusOr<bool> IsGzipFile(Env& env, const std::string& path);

// A SequentialFile of the bytes a gzip stream inflates to. Concatenated
// members (what `cat a.gz b.gz` or pigz write) read as one stream. Not
// thread-safe.
class GzipSequentialFile final : public SequentialFile {
 public:
  // Inflates what `compressed` holds; `file_name` names it in errors.
  static std::unique_ptr<GzipSequentialFile> Create(std::unique_ptr<SequentialFile> compressed,
                                                    std::string file_name);
  ~GzipSequentialFile() override;
  GzipSequentialFile(const GzipSequentialFile&) = delete;
  GzipSequentialFile& operator=(const GzipSequentialFile&) = delete;

  // InvalidArgument naming the file and how many bytes it had inflated to:
  // data that is not gzip or is corrupt, or a stream that ends inside a
  // member (a truncated file). Other codes: from the compressed file.
  absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) override;
  // Inflates n bytes and drops them.
  absl::Status Skip(uint64_t n) override;

 private:
  struct Stream;
  GzipSequentialFile(std::unique_ptr<SequentialFile> compressed, std::string file_name);
  absl::Status Broken(absl::string_view reason) const;

  std::unique_ptr<SequentialFile> compressed_;
  const std::string file_name_;
  std::unique_ptr<Stream> stream_;
  std::vector<char> input_;
  bool input_ended_ = false;
  // Inside a member: bytes were fed to it and its end not reached yet.
  bool in_member_ = false;
  int64_t inflated_ = 0;
};

// Opens `path` for reading as a stream, inflated when `gzip`.
absl::StatusOr<std::unique_ptr<SequentialFile>> OpenSequentialFile(Env& env,
                                                                   const std::string& path,
                                                                   bool gzip);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_GZIP_FILE_H_
