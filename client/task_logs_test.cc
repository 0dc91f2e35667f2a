#include "client/task_logs.h"

#include "common/checkpoint/memory_env.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::vector<std::string> Tasks(const std::vector<TaskLogFile>& logs) {
  std::vector<std::string> tasks;
  for (const TaskLogFile& log : logs) tasks.push_back(log.task);
  return tasks;
}

class TaskLogsTest : public testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"worker-10.log", "evaluator-0.log", "worker-2.log", "ps-1.log",
                             "coordinator-0.log", "ps-0.log", "worker-0.log",
                             // Not task logs: ready files, the scale inbox, strays.
                             "worker-0.ready", "prometheus_targets.json", "worker-x.log",
                             "worker-01.log", "chief-0.log"}) {
      env_.PutFile(std::string("/run/") + name, "");
    }
  }

  MemoryEnv env_;
};

TEST_F(TaskLogsTest, ListsTaskLogsInTheClustersOrder) {
  absl::StatusOr<std::vector<TaskLogFile>> logs = ListTaskLogs(env_, "/run");
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(Tasks(*logs), (std::vector<std::string>{"coordinator/0", "ps/0", "ps/1", "worker/0",
                                                    "worker/2", "worker/10", "evaluator/0"}));
  EXPECT_EQ((*logs)[5].path, "/run/worker-10.log");
}

TEST_F(TaskLogsTest, AFolderWithoutTaskLogsIsNoRunFolder) {
  env_.PutFile("/other/notes.txt", "");
  absl::StatusOr<std::vector<TaskLogFile>> logs = ListTaskLogs(env_, "/other");
  EXPECT_TRUE(absl::IsNotFound(logs.status())) << logs.status();
  EXPECT_NE(logs.status().message().find("no run folder of pstrain local"), std::string::npos)
      << logs.status();
  EXPECT_TRUE(absl::IsNotFound(ListTaskLogs(env_, "/missing").status()));
}

TEST_F(TaskLogsTest, SelectsOneTaskByNameOrRoleAlone) {
  absl::StatusOr<std::vector<TaskLogFile>> logs = ListTaskLogs(env_, "/run");
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(Tasks(*SelectTaskLogs(*logs, "")).size(), 7u);
  EXPECT_EQ(Tasks(*SelectTaskLogs(*logs, "worker/2")), std::vector<std::string>{"worker/2"});
  EXPECT_EQ(Tasks(*SelectTaskLogs(*logs, "coordinator")),
            std::vector<std::string>{"coordinator/0"});
  EXPECT_EQ(Tasks(*SelectTaskLogs(*logs, "evaluator")), std::vector<std::string>{"evaluator/0"});
}

TEST_F(TaskLogsTest, AnUnknownTaskNamesTheTasksThereAre) {
  absl::StatusOr<std::vector<TaskLogFile>> logs = ListTaskLogs(env_, "/run");
  ASSERT_TRUE(logs.ok()) << logs.status();
  absl::StatusOr<std::vector<TaskLogFile>> none = SelectTaskLogs(*logs, "worker/9");
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_EQ(none.status().message(),
            "no task worker/9 in this cluster; its tasks: coordinator/0, ps/0, ps/1, worker/0, "
            "worker/2, worker/10, evaluator/0");
}

}  // namespace
}  // namespace pstrain
