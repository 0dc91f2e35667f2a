#include "server/coordinator/task_name.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TEST(TaskNameTest, NamesRolesAsTfConfigDoes) {
  EXPECT_EQ(TaskName(MakeTask(TASK_TYPE_PS, 1)), "ps/1");
  EXPECT_EQ(TaskName(MakeTask(TASK_TYPE_WORKER, 0)), "worker/0");
  EXPECT_EQ(TaskName(MakeTask(TASK_TYPE_EVALUATOR, 0)), "evaluator/0");
}

TEST(TaskNameTest, HolderNameTellsIncarnationsApart) {
  EXPECT_EQ(HolderName(MakeTask(TASK_TYPE_WORKER, 2), 7), "worker/2#7");
  EXPECT_NE(HolderName(MakeTask(TASK_TYPE_WORKER, 2), 7), HolderName(MakeTask(TASK_TYPE_WORKER, 2), 8));
}

TEST(TaskNameTest, TaskListNamesFourTasksAndCountsTheRest) {
  EXPECT_EQ(TaskList({}), "");
  EXPECT_EQ(TaskList({MakeTask(TASK_TYPE_PS, 1), MakeTask(TASK_TYPE_WORKER, 0)}),
            "ps/1, worker/0");
  std::vector<TaskId> workers;
  for (int i = 0; i < 7; ++i) workers.push_back(MakeTask(TASK_TYPE_WORKER, i));
  EXPECT_EQ(TaskList(workers), "worker/0, worker/1, worker/2, worker/3 and 3 more");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
