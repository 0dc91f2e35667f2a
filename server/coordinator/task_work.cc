#include "server/coordinator/task_work.h"

#include "absl/strings/str_cat.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

std::string Count(int n, absl::string_view what) {
  return absl::StrCat(n, " ", what, n == 1 ? "" : "s");
}

}  // namespace

std::string HandBackWork(const TaskId& task, uint64_t incarnation, const JobLedgers& ledgers) {
  const std::string holder = HolderName(task, incarnation);
  const int data = ledgers.data != nullptr ? ledgers.data->ReleaseHolder(holder) : 0;
  const int checkpoints =
      ledgers.checkpoints != nullptr ? ledgers.checkpoints->ReleaseHolder(holder) : 0;
  return absl::StrCat(holder, " handed back ", Count(data, "data lease"), " and ",
                      Count(checkpoints, "checkpoint lease"));
}

}  // namespace coordinator
}  // namespace pstrain
