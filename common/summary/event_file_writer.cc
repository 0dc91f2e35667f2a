#include "common/summary/event_file_writer.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Writers started in the same second on one host get ".1", ".2", ...; more
// than this many means something is wrong.
constexpr int kMaxNameAttempts = 1000;

absl::StatusOr<std::string> UnusedEventFilePath(Env& env, const std::string& dir,
                                                absl::string_view hostname) {
  const std::string base =
      JoinPath(dir, absl::StrCat(kEventFilePrefix, absl::ToUnixSeconds(env.Now()), ".", hostname));
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    const std::string path = attempt == 0 ? base : absl::StrCat(base, ".", attempt);
    ASSIGN_OR_RETURN(const bool taken, PathExists(env, path));
    if (!taken) return path;
  }
  return absl::AlreadyExistsError(
      absl::StrCat(base, ": this name and ", kMaxNameAttempts - 1, " numbered ones are taken"));
}

}  // namespace

double EventWallTime(absl::Time t) { return static_cast<double>(absl::ToUnixMicros(t)) / 1e6; }

tensorflow::Event ScalarEvent(int64_t step, absl::string_view tag, double value,
                              absl::Time wall_time) {
  tensorflow::Event event;
  event.set_wall_time(EventWallTime(wall_time));
  event.set_step(step);
  tensorflow::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(static_cast<float>(value));
  return event;
}

std::string LocalHostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(
    Env* env, const std::string& dir, absl::string_view hostname) {
  if (hostname.empty() || hostname.find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("host name \"", hostname, "\" cannot be part of an event file name"));
  }
  RETURN_IF_ERROR(CreateDirs(*env, dir));
  ASSIGN_OR_RETURN(std::string path, UnusedEventFilePath(*env, dir, hostname));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env->NewWritableFile(path));
  std::unique_ptr<EventFileWriter> writer(new EventFileWriter(std::move(path), std::move(file)));
  tensorflow::Event version;
  version.set_wall_time(EventWallTime(env->Now()));
  version.set_file_version(std::string(kEventFileVersion));
  RETURN_IF_ERROR(writer->WriteEvent(version));
  // TensorBoard recognises the file from its first event; let it see it.
  RETURN_IF_ERROR(writer->Flush());
  return writer;
}

EventFileWriter::EventFileWriter(std::string path, std::unique_ptr<WritableFile> file)
    : path_(std::move(path)), file_(std::move(file)), records_(file_.get()) {}

EventFileWriter::~EventFileWriter() {
  if (file_ != nullptr) (void)Close();
}

absl::Status EventFileWriter::WriteEvent(const tensorflow::Event& event) {
  if (file_ == nullptr) return absl::FailedPreconditionError(absl::StrCat(path_, ": closed"));
  return records_.WriteRecord(event.SerializeAsString());
}

absl::Status EventFileWriter::Flush() {
  if (file_ == nullptr) return absl::FailedPreconditionError(absl::StrCat(path_, ": closed"));
  return file_->Flush();
}

absl::Status EventFileWriter::Close() {
  if (file_ == nullptr) return absl::FailedPreconditionError(absl::StrCat(path_, ": closed"));
  absl::Status synced = file_->Sync();
  absl::Status closed = file_->Close();
  file_.reset();
  return synced.ok() ? closed : synced;
}

}  // namespace pstrain
