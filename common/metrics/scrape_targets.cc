#include "common/metrics/scrape_targets.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace {

// Addresses and label values are plain ASCII in practice; escape what JSON
// requires anyway.
std::string JsonString(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          quoted += escaped;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

}  // namespace

std::string ScrapeTargetsJson(const std::vector<ScrapeTarget>& targets) {
  std::vector<std::string> groups;
  for (const ScrapeTarget& target : targets) {
    std::vector<std::string> labels;
    for (const auto& [name, value] : target.labels) {
      labels.push_back(absl::StrCat(JsonString(name), ": ", JsonString(value)));
    }
    groups.push_back(absl::StrCat("  {\"targets\": [", JsonString(target.address),
                                  "], \"labels\": {", absl::StrJoin(labels, ", "), "}}"));
  }
  if (groups.empty()) return "[]\n";
  return absl::StrCat("[\n", absl::StrJoin(groups, ",\n"), "\n]\n");
}

absl::Status WriteScrapeTargets(const std::string& path, const std::vector<ScrapeTarget>& targets) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << ScrapeTargetsJson(targets);
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace pstrain
