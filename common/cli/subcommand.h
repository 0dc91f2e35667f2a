#ifndef PSTRAIN_COMMON_CLI_SUBCOMMAND_H_
#define PSTRAIN_COMMON_CLI_SUBCOMMAND_H_

// A program made of commands (`pstrain submit ...`, `pstrain status ...`):
// the table that describes them, and the main() that parses the command
// line, shows help and runs one. Adding a command is one entry in the
// table its main() passes to RunSubcommands.

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/cli/flag_parser.h"

namespace pstrain {

struct Subcommand {
  std::string name;       // "submit"
  // Positional arguments and required flags as usage shows them:
  // "JOB.pbtxt", "JOB --to=DIR".
  std::string arguments;
  std::string summary;    // one line, for the program's --help
  // What it does, what it prints, its exit codes and at least one example;
  // shown by `PROGRAM COMMAND --help`.
  std::string description;
  // The program's own flags this command reads; any other one given to it
  // is a usage error. The logging library's flags are always accepted.
  std::vector<std::string> flags;
  // Runs the command with its positional arguments (flags are already set)
  // and returns the process exit code.
  std::function<int(const std::vector<std::string>& args)> run;
};

// Exit code of every usage error: unknown command or flag, bad flag value.
inline constexpr int kUsageErrorExitCode = 2;

// The whole main() of a program made of commands. `overview` opens the
// program's --help, before the list of commands.
//   PROGRAM --help | PROGRAM help         the overview and every command
//   PROGRAM help COMMAND                  COMMAND's help
//   PROGRAM COMMAND --help                the same
//   PROGRAM COMMAND ARGS... --flags       runs COMMAND
//   PROGRAM --version                     runs the command named "version",
//                                         when the table has one
//   PROGRAM help --markdown               FormatMarkdownReference
// Prints usage errors to stderr and returns kUsageErrorExitCode for them.
// `renamed` flags' old spellings still work, with a notice on stderr.
int RunSubcommands(absl::string_view program, absl::string_view overview,
                   const std::vector<Subcommand>& commands, int argc, char** argv,
                   const std::vector<RenamedFlag>& renamed = {});

// The program's --help: the overview, then one block per command.
std::string FormatProgramHelp(absl::string_view program, absl::string_view overview,
                              const std::vector<Subcommand>& commands);

// A command's --help: usage line, description, then its flags with their
// defaults.
std::string FormatSubcommandHelp(absl::string_view program, const Subcommand& command);

// Every command's usage, summary and flags (default, description) as
// Markdown, one "### `PROGRAM COMMAND ARGS`" section with a flag table each,
// in the table's order: the reference a manual includes, built from the
// same flags and words as --help so that the two cannot disagree.
std::string FormatMarkdownReference(absl::string_view program,
                                    const std::vector<Subcommand>& commands);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLI_SUBCOMMAND_H_
