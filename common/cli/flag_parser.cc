#include "common/cli/flag_parser.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"

namespace pstrain {
namespace {

bool FindFlag(const std::string& name, gflags::CommandLineFlagInfo* info) {
  return gflags::GetCommandLineFlagInfo(name.c_str(), info);
}

absl::Status SetFlag(const gflags::CommandLineFlagInfo& info, const std::string& value) {
  if (gflags::SetCommandLineOption(info.name.c_str(), value.c_str()).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", info.name, ": '", value, "' is not a valid ", info.type));
  }
  return absl::OkStatus();
}

// `name` under its new spelling when it is an old one, noting it.
std::string CurrentName(const std::string& name, const std::vector<RenamedFlag>& renamed,
                        ParsedArgs& parsed) {
  for (const RenamedFlag& flag : renamed) {
    if (name == flag.old_name) {
      parsed.deprecation_notices.push_back(
          absl::StrCat("--", flag.old_name, " is deprecated; use --", flag.name));
      return flag.name;
    }
  }
  return name;
}

}  // namespace

absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args,
                                      const std::vector<RenamedFlag>& renamed) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    std::string body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    std::string name = body;
    std::optional<std::string> value;
    if (size_t equals = body.find('='); equals != std::string::npos) {
      name = body.substr(0, equals);
      value = body.substr(equals + 1);
    }
    name = CurrentName(name, renamed, parsed);
    if ((name == "help" || name == "h") && !value.has_value()) {
      parsed.help = true;
      continue;
    }
    if (name == "helpfull" && !value.has_value()) {
      parsed.helpfull = true;
      continue;
    }
    if (name == "version" && !value.has_value()) {
      parsed.version = true;
      continue;
    }
    if (name == "markdown" && !value.has_value()) {
      parsed.markdown = true;
      continue;
    }
    gflags::CommandLineFlagInfo info;
    if (!FindFlag(name, &info)) {
      // --noprogress turns the bool flag --progress off, as gflags does;
      // --no-progress too, as most command-line tools spell it.
      gflags::CommandLineFlagInfo negated;
      const size_t prefix = absl::StartsWith(name, "no-") ? 3 : 2;
      if (absl::StartsWith(name, "no") && !value.has_value() &&
          FindFlag(CurrentName(name.substr(prefix), renamed, parsed), &negated) &&
          negated.type == "bool") {
        if (absl::Status set = SetFlag(negated, "false"); !set.ok()) return set;
        parsed.flags_set.push_back(negated.name);
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (!value.has_value()) {
      if (info.type == "bool") {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value (--", name, "=VALUE)"));
      }
    }
    if (absl::Status set = SetFlag(info, *value); !set.ok()) return set;
    parsed.flags_set.push_back(info.name);
  }
  return parsed;
}

}  // namespace pstrain
