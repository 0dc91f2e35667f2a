#include "server/coordinator/task_name.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/tf_config.h"

namespace pstrain {
namespace coordinator {

std::string TaskName(const TaskId& task) {
  return absl::StrCat(TaskTypeName(task.type()), "/", task.index());
}

std::string HolderName(const TaskId& task, uint64_t incarnation) {
  return absl::StrCat(TaskName(task), "#", incarnation);
}

std::string TaskList(const std::vector<TaskId>& tasks) {
  constexpr size_t kShown = 4;
  std::vector<std::string> names;
  for (size_t i = 0; i < tasks.size() && i < kShown; ++i) names.push_back(TaskName(tasks[i]));
  std::string list = absl::StrJoin(names, ", ");
  if (tasks.size() > kShown) absl::StrAppend(&list, " and ", tasks.size() - kShown, " more");
  return list;
}

TaskId MakeTask(TaskType type, int index) {
  TaskId task;
  task.set_type(type);
  task.set_index(index);
  return task;
}

}  // namespace coordinator
}  // namespace pstrain
