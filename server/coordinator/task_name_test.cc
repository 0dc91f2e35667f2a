#include "server/coordinator/task_name.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TaskId Task(TaskType type, int index) {
  TaskId task;
  task.set_type(type);
  task.set_index(index);
  return task;
}

TEST(TaskNameTest, NamesRolesAsTfConfigDoes) {
  EXPECT_EQ(TaskName(Task(TASK_TYPE_PS, 1)), "ps/1");
  EXPECT_EQ(TaskName(Task(TASK_TYPE_WORKER, 0)), "worker/0");
  EXPECT_EQ(TaskName(Task(TASK_TYPE_EVALUATOR, 0)), "evaluator/0");
}

TEST(TaskNameTest, HolderNameTellsIncarnationsApart) {
  EXPECT_EQ(HolderName(Task(TASK_TYPE_WORKER, 2), 7), "worker/2#7");
  EXPECT_NE(HolderName(Task(TASK_TYPE_WORKER, 2), 7), HolderName(Task(TASK_TYPE_WORKER, 2), 8));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
