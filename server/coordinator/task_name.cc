#include "server/coordinator/task_name.h"

#include "absl/strings/str_cat.h"
#include "common/config/tf_config.h"

namespace pstrain {
namespace coordinator {

std::string TaskName(const TaskId& task) {
  return absl::StrCat(TaskTypeName(task.type()), "/", task.index());
}

std::string HolderName(const TaskId& task, uint64_t incarnation) {
  return absl::StrCat(TaskName(task), "#", incarnation);
}

}  // namespace coordinator
}  // namespace pstrain
