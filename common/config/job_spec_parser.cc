#include "common/config/job_spec_parser.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/internal/json_error.h"
#include "common/status/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace {

namespace pb = ::google::protobuf;

// Keeps every error the text-format parser reports, with 1-based positions
// (the parser counts from 0).
class PositionedErrors : public pb::io::ErrorCollector {
 public:
  explicit PositionedErrors(absl::string_view source_name) : source_name_(source_name) {}

  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    errors_.push_back(absl::StrCat(source_name_, ":", line + 1, ":", column + 1, ": ", message));
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  const std::string source_name_;
  std::vector<std::string> errors_;
};

// Closes a file descriptor when it goes out of scope.
class FileCloser {
 public:
  explicit FileCloser(int fd) : fd_(fd) {}
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;
  ~FileCloser() { close(fd_); }

 private:
  const int fd_;
};

absl::Status ErrnoError(int error, absl::string_view what, const std::string& path) {
  std::string message =
      absl::StrCat("cannot ", what, " job spec file ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EISDIR:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::string> ReadJobSpecFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  FileCloser closer(fd);
  struct stat info;
  if (fstat(fd, &info) != 0) return ErrnoError(errno, "stat", path);
  if (S_ISDIR(info.st_mode)) return ErrnoError(EISDIR, "read", path);
  std::string contents;
  char buffer[64 << 10];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read", path);
    }
    if (n == 0) break;
    if (contents.size() + n > kMaxJobSpecFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat("job spec file ", path, " is larger than ",
                                                     kMaxJobSpecFileBytes,
                                                     " bytes; is it a job spec?"));
    }
    contents.append(buffer, n);
  }
  return contents;
}

enum class SpecFormat { kText, kJson };

absl::StatusOr<SpecFormat> FormatFromPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  const absl::string_view base =
      absl::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == absl::string_view::npos || dot == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("job spec file ", path,
                     " has no extension; use .pbtxt, .textproto or .txt for text format, .json "
                     "for JSON"));
  }
  const std::string extension = absl::AsciiStrToLower(base.substr(dot));
  if (extension == ".pbtxt" || extension == ".textproto" || extension == ".txt") {
    return SpecFormat::kText;
  }
  if (extension == ".json") return SpecFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("job spec file ", path, " has extension \"", base.substr(dot),
                   "\"; use .pbtxt, .textproto or .txt for text format, .json for JSON"));
}

}  // namespace

absl::StatusOr<JobSpec> ParseJobSpecText(absl::string_view text, absl::string_view source_name) {
  // The zero-copy stream counts in int; a spec this large is a mistake anyway.
  if (text.size() > kMaxJobSpecFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": job spec is larger than ", kMaxJobSpecFileBytes, " bytes"));
  }
  PositionedErrors errors(source_name);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  JobSpec spec;
  if (!parser.Parse(&input, &spec)) {
    if (errors.errors().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": not a valid job spec"));
    }
    return absl::InvalidArgumentError(absl::StrJoin(errors.errors(), "; "));
  }
  return spec;
}

absl::StatusOr<JobSpec> ParseJobSpecJson(absl::string_view json, absl::string_view source_name) {
  if (json.size() > kMaxJobSpecFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": job spec is larger than ", kMaxJobSpecFileBytes, " bytes"));
  }
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt field must not pass silently
  JobSpec spec;
  pb::util::Status parsed =
      pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()), &spec, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": ", config_internal::JsonErrorMessage(parsed)));
  }
  return spec;
}

absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path) {
  ASSIGN_OR_RETURN(SpecFormat format, FormatFromPath(path));
  ASSIGN_OR_RETURN(std::string contents, ReadJobSpecFile(path));
  if (format == SpecFormat::kJson) return ParseJobSpecJson(contents, path);
  return ParseJobSpecText(contents, path);
}

}  // namespace pstrain
