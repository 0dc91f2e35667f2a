#ifndef PSTRAIN_TESTS_NODE_SCRIPT_H_
#define PSTRAIN_TESTS_NODE_SCRIPT_H_

// Node scripts that tests run with npm packages scripts/setup.sh installs
// (ONNX Runtime in tests/onnx, Playwright in tests/console), each tree an
// external repository of the WORKSPACE whose files are runfiles.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {

struct NodeScript {
  // A path in the workspace, a data dependency of the test.
  std::string script;
  // The external repository of its node_modules (see WORKSPACE), and a
  // package that tree must hold.
  std::string node_modules_repository;
  std::string required_package;
  // A script that runs longer is killed. Default 10 min: the first run of a
  // big model on a loaded 2-core machine can take minutes, and a hang
  // should still end the test with a message.
  absl::Duration timeout = absl::Minutes(10);
  // Extra environment, "NAME=value".
  std::vector<std::string> env;
};

// Runs `node script args...` with the tree on its module path; what it
// printed (stdout and stderr together).
// FailedPrecondition: no node, or the script or package is not in the
//   runfiles (scripts/setup.sh installs them).
// InvalidArgument: the script exited 1, its own report of a failure.
// DeadlineExceeded: it ran past the timeout (it was killed).
// Internal: it ended otherwise. Each message names the script and holds
//   what it printed.
absl::StatusOr<std::string> RunNodeScript(const NodeScript& script,
                                          const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_TESTS_NODE_SCRIPT_H_
