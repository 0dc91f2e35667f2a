#include "tests/pstrain_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
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
  std::stringstream output;
  output << std::ifstream(options.log_path).rdbuf();
  return output.str();
}

}  // namespace pstrain
