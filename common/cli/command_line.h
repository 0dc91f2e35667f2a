#ifndef PSTRAIN_COMMON_CLI_COMMAND_LINE_H_
#define PSTRAIN_COMMON_CLI_COMMAND_LINE_H_

// Start-up of every pstrain binary: flags, logging and --help.
//
// Flags are gflags (glog already depends on them, and one flag system per
// process keeps --help honest). --help prints the usage text and the flags
// defined by pstrain itself, without the logging library's own; --helpfull
// prints every flag.

#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {

// Parses the command line, removing recognised flags from argv (the
// positional arguments remain), and sets up glog to log to stderr.
// On --help or --helpfull prints to stdout and exits 0; on an unknown flag
// or a bad flag value prints the error to stderr and exits 1.
// `usage` is the text shown first by --help: what the program does and how
// it is called.
void InitCommandLine(absl::string_view usage, int* argc, char*** argv);

// The text --help prints: `usage`, then pstrain's own flags with their
// defaults and descriptions. Exposed for tests.
std::string FormatHelp(absl::string_view program, absl::string_view usage);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLI_COMMAND_LINE_H_
