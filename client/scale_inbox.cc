#include "client/scale_inbox.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Requests, answers and pointers are a few lines; anything longer is not
// one of them.
constexpr int64_t kMaxFileBytes = 64 << 10;
// How often `pstrain scale` looks for its answer.
constexpr absl::Duration kAnswerPollInterval = absl::Milliseconds(100);
constexpr absl::string_view kRequestPrefix = "request-";
constexpr absl::string_view kAnswerPrefix = "answer-";

bool ProcessRuns(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// Where every running `pstrain local` of this user leaves its pointer.
std::string PointerFolder() {
  const char* tmp = std::getenv("TMPDIR");
  return absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/pstrain-local-", ::getuid());
}

std::string InboxFolder(const std::string& run_dir) { return run_dir + "/scale"; }

absl::Status CreateFolder(Env& env, const std::string& path) {
  absl::Status created = env.CreateDir(path);
  return absl::IsAlreadyExists(created) ? absl::OkStatus() : created;
}

// The pid of `text` ("1234\n", or the "1234" of "1234-..."); 0 if none.
int LeadingPid(absl::string_view text) {
  int pid = 0;
  const absl::string_view digits = text.substr(0, text.find_first_not_of("0123456789"));
  return absl::SimpleAtoi(digits, &pid) ? pid : 0;
}

// The `pstrain local` that owns the inbox `folder`; 0 when there is none or
// it no longer runs.
int RunningOwner(Env& env, const std::string& folder) {
  absl::StatusOr<std::string> text = ReadWholeFile(env, folder + "/owner", kMaxFileBytes);
  const int pid = text.ok() ? LeadingPid(*text) : 0;
  return ProcessRuns(pid) ? pid : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScaleInbox>> ScaleInbox::Open(const std::string& run_dir) {
  PosixEnv env;
  const std::string folder = InboxFolder(run_dir);
  RETURN_IF_ERROR(CreateFolder(env, folder));
  if (const int owner = RunningOwner(env, folder); owner != 0 && owner != ::getpid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("another pstrain local (pid ", owner, ") runs with run folder ", run_dir));
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, env.ListDir(folder));
  for (const std::string& name : names) {
    if (absl::StartsWith(name, kRequestPrefix) || absl::StartsWith(name, kAnswerPrefix)) {
      env.RemoveFile(absl::StrCat(folder, "/", name)).IgnoreError();
    }
  }
  RETURN_IF_ERROR(WriteFileAtomically(env, folder + "/owner", absl::StrCat(::getpid(), "\n")));
  RETURN_IF_ERROR(CreateFolder(env, PointerFolder()));
  // Named by pid (whose liveness tells a stale pointer) and run folder (one
  // process may own several, as tests do).
  const std::string pointer =
      absl::StrCat(PointerFolder(), "/", ::getpid(), "-", std::hash<std::string>{}(run_dir));
  RETURN_IF_ERROR(WriteFileAtomically(env, pointer, run_dir + "\n"));
  return std::unique_ptr<ScaleInbox>(new ScaleInbox(folder, pointer));
}

ScaleInbox::~ScaleInbox() {
  env_.RemoveFile(pointer_).IgnoreError();
  if (RunningOwner(env_, folder_) == ::getpid()) env_.RemoveFile(folder_ + "/owner").IgnoreError();
}

std::vector<ScaleInbox::Received> ScaleInbox::Take() {
  std::vector<Received> received;
  absl::StatusOr<std::vector<std::string>> names = env_.ListDir(folder_);
  if (!names.ok()) return received;
  for (const std::string& name : *names) {
    int requester = 0;
    // Skips the temporary files requests are written under.
    if (!absl::StartsWith(name, kRequestPrefix) ||
        !absl::SimpleAtoi(absl::StripPrefix(name, kRequestPrefix), &requester)) {
      continue;
    }
    const std::string path = absl::StrCat(folder_, "/", name);
    absl::StatusOr<std::string> text = ReadWholeFile(env_, path, kMaxFileBytes);
    env_.RemoveFile(path).IgnoreError();
    received.push_back({requester, text.ok() ? ParseScaleRequest(*text) : text.status()});
  }
  return received;
}

absl::Status ScaleInbox::Answer(int requester, const ScaleAnswer& answer) {
  return WriteFileAtomically(env_, absl::StrCat(folder_, "/", kAnswerPrefix, requester),
                             FormatScaleAnswer(answer));
}

absl::StatusOr<std::string> FindRunningLocalCluster() {
  PosixEnv env;
  const std::string folder = PointerFolder();
  absl::StatusOr<std::vector<std::string>> names = env.ListDir(folder);
  std::set<std::string> run_dirs;
  for (const std::string& name : names.ok() ? *names : std::vector<std::string>()) {
    const std::string path = absl::StrCat(folder, "/", name);
    const int pid = LeadingPid(name);
    if (pid == 0) continue;  // a temporary file
    if (!ProcessRuns(pid)) {
      env.RemoveFile(path).IgnoreError();  // its `pstrain local` was killed
      continue;
    }
    absl::StatusOr<std::string> run_dir = ReadWholeFile(env, path, kMaxFileBytes);
    if (run_dir.ok()) run_dirs.insert(std::string(absl::StripSuffix(*run_dir, "\n")));
  }
  if (run_dirs.empty()) {
    return absl::NotFoundError(
        "no pstrain local of this user is running (scaling works while one runs a job or "
        "--keep_running); pass --run_dir if it runs with another $TMPDIR");
  }
  if (run_dirs.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(run_dirs.size(),
                     " pstrain local clusters are running; say which with "
                     "--run_dir: ",
                     absl::StrJoin(run_dirs, ", ")));
  }
  return *run_dirs.begin();
}

absl::StatusOr<ScaleAnswer> SendScaleRequest(const std::string& run_dir,
                                             const ScaleRequest& request, absl::Duration timeout) {
  PosixEnv env;
  const std::string folder = InboxFolder(run_dir);
  const int owner = RunningOwner(env, folder);
  if (owner == 0) {
    return absl::NotFoundError(absl::StrCat("no pstrain local runs with run folder ", run_dir,
                                            " (while one runs, ", folder, "/owner holds its pid)"));
  }
  const std::string request_path = absl::StrCat(folder, "/", kRequestPrefix, ::getpid());
  const std::string answer_path = absl::StrCat(folder, "/", kAnswerPrefix, ::getpid());
  env.RemoveFile(answer_path).IgnoreError();
  RETURN_IF_ERROR(WriteFileAtomically(env, request_path, FormatScaleRequest(request)));
  auto read_answer = [&]() -> std::optional<absl::StatusOr<ScaleAnswer>> {
    absl::StatusOr<std::string> text = ReadWholeFile(env, answer_path, kMaxFileBytes);
    if (!text.ok()) return std::nullopt;
    env.RemoveFile(answer_path).IgnoreError();
    return ParseScaleAnswer(*text);
  };
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (auto answer = read_answer()) return *std::move(answer);
    // It may have answered just before it ended.
    if (!ProcessRuns(owner)) {
      if (auto answer = read_answer()) return *std::move(answer);
      env.RemoveFile(request_path).IgnoreError();
      return absl::UnavailableError(
          absl::StrCat("pstrain local (pid ", owner, ") ended before it answered"));
    }
    if (absl::Now() >= deadline) {
      env.RemoveFile(request_path).IgnoreError();
      return absl::DeadlineExceededError(absl::StrCat(
          "no answer from pstrain local (pid ", owner, ") within ", absl::FormatDuration(timeout),
          "; it takes requests while it runs a job or --keep_running (see its output)"));
    }
    absl::SleepFor(kAnswerPollInterval);
  }
}

}  // namespace pstrain
