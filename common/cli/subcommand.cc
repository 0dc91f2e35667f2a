#include "common/cli/subcommand.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/cli/flag_help.h"
#include "common/cli/flag_parser.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

const Subcommand* FindCommand(const std::vector<Subcommand>& commands, absl::string_view name) {
  for (const Subcommand& command : commands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string UsageLine(absl::string_view program, const Subcommand& command) {
  return absl::StrCat(program, " ", command.name,
                      command.arguments.empty() ? "" : absl::StrCat(" ", command.arguments),
                      command.flags.empty() ? "" : " [--flags]");
}

// A flag of the program's own given to a command that does not read it is
// almost always a mistake (`pstrain status --workers 3`): refuse it rather
// than silently ignore it.
std::string FlagNotForCommand(const std::vector<std::string>& flags_set,
                              const Subcommand& command) {
  for (const std::string& name : flags_set) {
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info) || !IsOwnFlag(info)) continue;
    if (std::find(command.flags.begin(), command.flags.end(), name) == command.flags.end()) {
      return name;
    }
  }
  return "";
}

// The first argument that is not a flag, if any: names the command in an
// error when the flags do not parse.
std::vector<std::string> FirstPlainArgument(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (!arg.empty() && arg[0] != '-') return {arg};
  }
  return {};
}

int UnknownCommand(absl::string_view program, const std::vector<Subcommand>& commands,
                   const std::string& name) {
  std::cerr << program << ": unknown command '" << name << "' (commands: "
            << absl::StrJoin(
                   commands, ", ",
                   [](std::string* out, const Subcommand& c) { absl::StrAppend(out, c.name); })
            << "; see " << program << " --help)\n";
  return kUsageErrorExitCode;
}

// A flag's description or default as a Markdown table cell shows it: a `|`
// would end the cell, and <role> would be taken for an HTML tag.
std::string MarkdownCell(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"<", "&lt;"}, {">", "&gt;"}});
}

// `program help [COMMAND]`, or `program help --markdown`.
int ShowHelp(absl::string_view program, absl::string_view overview,
             const std::vector<Subcommand>& commands, const std::vector<std::string>& positional,
             bool markdown) {
  if (markdown) {
    if (positional.size() > 1) {
      std::cerr << program << " help --markdown: takes no command; it shows every one\n";
      return kUsageErrorExitCode;
    }
    std::cout << FormatMarkdownReference(program, commands);
    return 0;
  }
  if (positional.size() < 2) {
    std::cout << FormatProgramHelp(program, overview, commands);
    return 0;
  }
  const Subcommand* topic = FindCommand(commands, positional[1]);
  if (topic == nullptr) {
    std::cerr << program << " help: unknown command '" << positional[1] << "' (see " << program
              << " --help)\n";
    return kUsageErrorExitCode;
  }
  std::cout << FormatSubcommandHelp(program, *topic);
  return 0;
}

}  // namespace

std::string FormatProgramHelp(absl::string_view program, absl::string_view overview,
                              const std::vector<Subcommand>& commands) {
  std::string text = absl::StrCat(overview, "\n\nUsage: ", program, " COMMAND [ARGS] [--flags]\n",
                                  "\nCommands:\n");
  for (const Subcommand& command : commands) {
    absl::StrAppend(&text, "  ", command.name,
                    command.arguments.empty() ? "" : absl::StrCat(" ", command.arguments), "\n      ",
                    command.summary, "\n");
  }
  absl::StrAppend(&text, "\n", program, " help COMMAND (or ", program,
                  " COMMAND --help) shows a command's flags and an example.\n", program,
                  " --helpfull lists every flag, including the logging library's.\n");
  return text;
}

std::string FormatSubcommandHelp(absl::string_view program, const Subcommand& command) {
  std::string text =
      absl::StrCat("Usage: ", UsageLine(program, command), "\n\n", command.description, "\n");
  if (!command.flags.empty()) absl::StrAppend(&text, "\nFlags:\n");
  for (const std::string& name : command.flags) {
    gflags::CommandLineFlagInfo info;
    // A missing flag is a programming error of the table, not a user's.
    CHECK(gflags::GetCommandLineFlagInfo(name.c_str(), &info)) << "no flag --" << name;
    absl::StrAppend(&text, FormatFlagHelp(info));
  }
  return text;
}

std::string FormatMarkdownReference(absl::string_view program,
                                    const std::vector<Subcommand>& commands) {
  std::string text;
  for (const Subcommand& command : commands) {
    absl::StrAppend(&text, text.empty() ? "" : "\n", "### `", program, " ", command.name,
                    command.arguments.empty() ? "" : absl::StrCat(" ", command.arguments), "`\n\n",
                    command.summary, ".\n\n");
    if (command.flags.empty()) {
      absl::StrAppend(&text, "No flags.\n");
      continue;
    }
    absl::StrAppend(&text, "| flag | default | meaning |\n|---|---|---|\n");
    for (const std::string& name : command.flags) {
      gflags::CommandLineFlagInfo info;
      CHECK(gflags::GetCommandLineFlagInfo(name.c_str(), &info)) << "no flag --" << name;
      const std::string value = info.type == "bool" ? "" : info.type == "string" ? "=STRING" : "=N";
      const std::string default_value =
          info.type == "string" ? absl::StrCat("\"", info.default_value, "\"") : info.default_value;
      absl::StrAppend(&text, "| `--", name, value, "` | `",
                      absl::StrReplaceAll(default_value, {{"|", "\\|"}}), "` | ",
                      MarkdownCell(info.description), " |\n");
    }
  }
  return text;
}

int RunSubcommands(absl::string_view program, absl::string_view overview,
                   const std::vector<Subcommand>& commands, int argc, char** argv,
                   const std::vector<RenamedFlag>& renamed) {
  // Logs go to stderr; glog's default of files under /tmp would hide them.
  gflags::SetCommandLineOptionWithMode("logtostderr", "true", gflags::SET_FLAGS_DEFAULT);
  if (!google::IsGoogleLoggingInitialized()) {
    google::InitGoogleLogging(argc > 0 ? argv[0] : std::string(program).c_str());
  }

  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, renamed);
  // The command is the first positional argument, so flags may come before it.
  std::vector<std::string> positional = parsed.ok() ? parsed->positional : FirstPlainArgument(args);
  const Subcommand* command = nullptr;
  if (!positional.empty() && positional.front() != "help") {
    command = FindCommand(commands, positional.front());
    if (command == nullptr) return UnknownCommand(program, commands, positional.front());
  }
  if (!parsed.ok()) {
    std::cerr << program << (command ? absl::StrCat(" ", command->name) : "") << ": "
              << parsed.status().message() << " (see " << program
              << (command ? absl::StrCat(" ", command->name) : "") << " --help)\n";
    return kUsageErrorExitCode;
  }
  for (const std::string& notice : parsed->deprecation_notices) {
    std::cerr << program << ": " << notice << "\n";
  }
  if (parsed->helpfull) {
    gflags::ShowUsageWithFlags(std::string(program).c_str());
    return 0;
  }
  if (!positional.empty() && positional.front() == "help") {
    return ShowHelp(program, overview, commands, positional, parsed->markdown);
  }
  if (parsed->markdown) {
    std::cerr << program << ": --markdown goes with help (" << program << " help --markdown)\n";
    return kUsageErrorExitCode;
  }
  if (parsed->version) {
    const Subcommand* version = FindCommand(commands, "version");
    if (version == nullptr) {
      std::cerr << program << ": unknown flag --version (see " << program << " --help)\n";
      return kUsageErrorExitCode;
    }
    return version->run({});
  }
  if (command == nullptr) {
    if (parsed->help) {
      std::cout << FormatProgramHelp(program, overview, commands);
      return 0;
    }
    std::cerr << FormatProgramHelp(program, overview, commands) << "\n"
              << program << ": no command given\n";
    return kUsageErrorExitCode;
  }
  if (parsed->help) {
    std::cout << FormatSubcommandHelp(program, *command);
    return 0;
  }
  if (std::string stray = FlagNotForCommand(parsed->flags_set, *command); !stray.empty()) {
    std::cerr << program << " " << command->name << ": --" << stray
              << " does not apply to this command (see " << program << " " << command->name
              << " --help)\n";
    return kUsageErrorExitCode;
  }
  positional.erase(positional.begin());
  return command->run(positional);
}

}  // namespace pstrain
