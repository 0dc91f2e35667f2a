#ifndef PSTRAIN_TESTS_PSTRAIN_COMMAND_H_
#define PSTRAIN_TESTS_PSTRAIN_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/process/child_process.h"

namespace pstrain {

// Runs the `pstrain` program (from the test's runfiles) with `args`, as a
// user runs it, and waits for it (testing_cluster::kJobDeadline at most);
// its stdout and stderr together. *exit: how it ended. `data_cap_bytes` > 0
// runs it under `ulimit -d` of that many bytes (RLIMIT_DATA). A failure to
// start or wait is a test failure.
std::string RunPstrain(const std::vector<std::string>& args, ExitStatus* exit,
                       int64_t data_cap_bytes = 0);

}  // namespace pstrain

#endif  // PSTRAIN_TESTS_PSTRAIN_COMMAND_H_
