#include "common/checkpoint/checkpoint_pointer.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// A step is at most 19 digits; anything much larger is not a pointer.
constexpr int64_t kMaxPointerBytes = 256;

std::string PointerPath(const std::string& model_dir) {
  return JoinPath(model_dir, kCheckpointPointerFileName);
}

}  // namespace

absl::Status WriteCheckpointPointer(Env& env, const std::string& model_dir, int64_t step) {
  return WriteFileAtomically(env, PointerPath(model_dir), absl::StrCat(step, "\n"));
}

absl::StatusOr<int64_t> ReadCheckpointPointer(Env& env, const std::string& model_dir) {
  const std::string path = PointerPath(model_dir);
  absl::StatusOr<std::string> contents = ReadWholeFile(env, path, kMaxPointerBytes);
  if (absl::IsResourceExhausted(contents.status())) {
    return absl::DataLossError(
        absl::StrCat(path, ": more than ", kMaxPointerBytes, " bytes; expected one step number"));
  }
  if (!contents.ok()) return contents.status();
  const absl::string_view text = absl::StripAsciiWhitespace(*contents);
  int64_t step = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &step) || step < 0) {
    return absl::DataLossError(absl::StrCat(path, ": expected one step number, found \"",
                                            absl::CHexEscape(text.substr(0, 40)), "\""));
  }
  return step;
}

absl::Status RemoveCheckpointPointer(Env& env, const std::string& model_dir) {
  absl::Status removed = env.RemoveFile(PointerPath(model_dir));
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  RETURN_IF_ERROR(removed);
  return env.SyncDir(model_dir);
}

}  // namespace pstrain
