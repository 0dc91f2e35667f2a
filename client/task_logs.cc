#include "client/task_logs.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace pstrain {
namespace {

// The roles of a cluster, in the order its tasks are listed.
constexpr const char* kRoles[] = {"coordinator", "ps", "worker", "evaluator"};

struct ParsedLogName {
  int role_rank;
  int index;
};

// "worker-3.log" -> {rank of worker, 3}; nullopt for any other file.
std::optional<ParsedLogName> ParseLogName(absl::string_view name) {
  if (!absl::ConsumeSuffix(&name, ".log")) return std::nullopt;
  for (int rank = 0; rank < static_cast<int>(std::size(kRoles)); ++rank) {
    absl::string_view rest = name;
    int index = 0;
    if (absl::ConsumePrefix(&rest, kRoles[rank]) && absl::ConsumePrefix(&rest, "-") &&
        !rest.empty() && absl::SimpleAtoi(rest, &index) && index >= 0 &&
        absl::StrCat(index) == rest) {
      return ParsedLogName{rank, index};
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<TaskLogFile>> ListTaskLogs(Env& env, const std::string& run_dir) {
  absl::StatusOr<std::vector<std::string>> names = env.ListDir(run_dir);
  if (absl::IsNotFound(names.status())) {
    return absl::NotFoundError(absl::StrCat("no folder ", run_dir));
  }
  if (!names.ok()) return names.status();
  std::vector<std::pair<ParsedLogName, TaskLogFile>> found;
  for (const std::string& name : *names) {
    std::optional<ParsedLogName> parsed = ParseLogName(name);
    if (!parsed.has_value()) continue;
    found.push_back(
        {*parsed, TaskLogFile{absl::StrCat(kRoles[parsed->role_rank], "/", parsed->index),
                              absl::StrCat(run_dir, "/", name)}});
  }
  if (found.empty()) {
    return absl::NotFoundError(absl::StrCat(
        run_dir, " holds no task log (<role>-<index>.log): it is no run folder of pstrain local"));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.role_rank, a.first.index) < std::tie(b.first.role_rank, b.first.index);
  });
  std::vector<TaskLogFile> logs;
  for (auto& [parsed, log] : found) logs.push_back(std::move(log));
  return logs;
}

absl::StatusOr<std::vector<TaskLogFile>> SelectTaskLogs(const std::vector<TaskLogFile>& logs,
                                                        const std::string& task) {
  if (task.empty()) return logs;
  const std::string name = task.find('/') == std::string::npos ? absl::StrCat(task, "/0") : task;
  for (const TaskLogFile& log : logs) {
    if (log.task == name) return std::vector<TaskLogFile>{log};
  }
  return absl::NotFoundError(absl::StrCat(
      "no task ", task, " in this cluster; its tasks: ",
      absl::StrJoin(logs, ", ",
                    [](std::string* out, const TaskLogFile& log) { out->append(log.task); })));
}

}  // namespace pstrain
