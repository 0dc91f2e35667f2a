#include "tests/pstrain_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/binary_locator.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace pstrain {

std::string RunPstrain(const std::vector<std::string>& args, ExitStatus* exit,
                       int64_t data_cap_bytes) {
  absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
  EXPECT_TRUE(program.ok()) << program.status();
  ChildProcessOptions options{program.value_or(""), args, {}, ""};
  if (data_cap_bytes > 0) {
    // The shell sets the limit, then becomes pstrain.
    std::string command =
        absl::StrCat("ulimit -d ", data_cap_bytes / 1024, " && exec '", options.program, "'");
    for (const std::string& arg : args) absl::StrAppend(&command, " '", arg, "'");
    options = {"/bin/sh", {"-c", command}, {}, ""};
  }
  options.log_path = testing::TempDir() + "/pstrain_command.out";
  std::remove(options.log_path.c_str());
  auto child = ChildProcess::Start(options);
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return "";
  absl::StatusOr<ExitStatus> status = (*child)->Wait(testing_cluster::kJobDeadline);
  EXPECT_TRUE(status.ok()) << status.status();
  if (status.ok()) *exit = *status;
  return ReadWholeFile(options.log_path);
}

double MakeCriteoLogs(const std::string& dir, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"make-criteo-logs", dir};
  args.insert(args.end(), flags.begin(), flags.end());
  ExitStatus exit;
  const std::string written = RunPstrain(args, &exit);
  EXPECT_EQ(exit.exit_code, 0) << written;
  std::smatch match;
  if (!std::regex_search(written, match, std::regex("true model's AUC on .*: ([0-9.]+)"))) {
    ADD_FAILURE() << "no true AUC in:\n" << written;
    return std::nan("");
  }
  return std::stod(match[1]);
}

std::unique_ptr<ChildProcess> LaunchPstrain(const std::vector<std::string>& args,
                                            const std::string& log_path) {
  absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return nullptr;
  auto child = ChildProcess::Start({*program, args, {}, log_path});
  EXPECT_TRUE(child.ok()) << child.status();
  return child.ok() ? *std::move(child) : nullptr;
}

std::string MakeTestFolder() {
  const std::string folder =
      testing::TempDir() + "/" + testing::UnitTest::GetInstance()->current_test_info()->name();
  ::mkdir(folder.c_str(), 0755);
  return folder;
}

std::string ReadWholeFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

bool WaitForText(const std::string& path, const std::string& text, absl::Duration deadline) {
  const absl::Time end = absl::Now() + deadline;
  while (absl::Now() < end) {
    if (absl::StrContains(ReadWholeFile(path), text)) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

int ReadyFilePid(const std::string& run_dir, const std::string& file) {
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(run_dir + "/" + file + ".ready"), '\n')) {
    int pid = 0;
    if (absl::ConsumePrefix(&line, "pid=") && absl::SimpleAtoi(line, &pid)) return pid;
  }
  return 0;
}

bool ProcessIsGone(int pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

}  // namespace pstrain
