#ifndef PSTRAIN_COMMON_CLI_FLAG_PARSER_H_
#define PSTRAIN_COMMON_CLI_FLAG_PARSER_H_

// The command line of `pstrain COMMAND ...`, parsed without gflags' own
// parser: that one exits 1 on an unknown flag, and pstrain promises exit
// code 2 for every usage error. Values are still set through gflags, so
// FLAGS_x and --helpfull stay the single source of truth.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pstrain {

// A flag's old spelling, still accepted where scripts may use it: the
// parser sets `name` instead and records a deprecation notice.
struct RenamedFlag {
  std::string old_name;  // "coordinator"
  std::string name;      // "coordinator_address"
};

struct ParsedArgs {
  // Arguments that are not flags, in order (everything after "--" too).
  std::vector<std::string> positional;
  // Names of the flags set, as defined ("noprogress" is recorded as
  // "progress").
  std::vector<std::string> flags_set;
  // One per old spelling used: "--coordinator is deprecated; use
  // --coordinator_address".
  std::vector<std::string> deprecation_notices;
  bool help = false;      // --help, -h
  bool helpfull = false;  // --helpfull
  bool version = false;   // --version
  bool markdown = false;  // --markdown: help as a Markdown reference
};

// Parses `args` (argv without argv[0]) and sets each flag it finds.
// --help, -h, --helpfull, --version and --markdown are the parser's own
// (gflags' flags of those names are never set). Accepted forms: --name=value, --name value (not for
// bool flags), --name and
// --noname for bool flags, with one or two leading dashes.
// `renamed` flags are set under their new name (--noOLD too, for a bool).
// InvalidArgument, naming the flag: an unknown flag, a missing value, or a
// value the flag's type does not accept. Flags before the error are set.
absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args,
                                      const std::vector<RenamedFlag>& renamed = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLI_FLAG_PARSER_H_
