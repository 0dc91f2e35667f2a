#ifndef PSTRAIN_TESTS_PSTRAIN_COMMAND_H_
#define PSTRAIN_TESTS_PSTRAIN_COMMAND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/process/child_process.h"

namespace pstrain {

// Runs the `pstrain` program (from the test's runfiles) with `args`, as a
// user runs it, and waits for it (testing_cluster::kJobDeadline at most);
// its stdout and stderr together. *exit: how it ended. `data_cap_bytes` > 0
// runs it under `ulimit -d` of that many bytes (RLIMIT_DATA). A failure to
// start or wait is a test failure.
std::string RunPstrain(const std::vector<std::string>& args, ExitStatus* exit,
                       int64_t data_cap_bytes = 0);

// Runs `pstrain make-criteo-logs dir` with `flags` (--criteo_...); the
// true model's AUC on the test lines it prints, or NaN and a test failure
// when it fails or prints none.
double MakeCriteoLogs(const std::string& dir, const std::vector<std::string>& flags);

// Starts the `pstrain` program with `args` in the background, its stdout
// and stderr together in `log_path`; null (and a test failure) if it cannot
// start.
std::unique_ptr<ChildProcess> LaunchPstrain(const std::vector<std::string>& args,
                                            const std::string& log_path);

// A new folder for the running test, named after it, under the test's temp
// folder; its path.
std::string MakeTestFolder();

// The whole of a file; empty if it cannot be read.
std::string ReadWholeFile(const std::string& path);

// Polls `path` until it contains `text`; false if it does not within
// `deadline`.
bool WaitForText(const std::string& path, const std::string& text, absl::Duration deadline);

// The pid in a ready file of `pstrain local`'s run folder (each process
// writes <run_dir>/<role>-<index>.ready, again when restarted): `file` is
// "worker-1". 0 if there is none.
int ReadyFilePid(const std::string& run_dir, const std::string& file);

// Whether no process has `pid` any more.
bool ProcessIsGone(int pid);

}  // namespace pstrain

#endif  // PSTRAIN_TESTS_PSTRAIN_COMMAND_H_
