#include "common/config/tf_config.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The cluster part of what Kubeflow's TFJob operator writes for a job named
// "mnist" in namespace "kubeflow": one chief, two ps, two workers; the
// evaluator is not listed.
constexpr char kTfJobCluster[] =
    R"("cluster": {"chief": ["mnist-chief-0.kubeflow.svc:2222"],)"
    R"( "ps": ["mnist-ps-0.kubeflow.svc:2222", "mnist-ps-1.kubeflow.svc:2222"],)"
    R"( "worker": ["mnist-worker-0.kubeflow.svc:2222", "mnist-worker-1.kubeflow.svc:2222"]})";

std::string TfJobConfig(const std::string& type, int index) {
  return std::string("{") + kTfJobCluster + R"(, "task": {"type": ")" + type + R"(", "index": )" +
         std::to_string(index) + R"(}, "environment": "cloud"})";
}

absl::Status ParseError(const std::string& json) {
  absl::StatusOr<ParsedTfConfig> parsed = ParseTfConfig(json);
  EXPECT_FALSE(parsed.ok()) << json;
  return parsed.status();
}

TEST(ParseTfConfigTest, ParsesTfJobConfigOfEveryRole) {
  struct Case {
    std::string type;
    int index;
    TaskType want;
  };
  const Case cases[] = {{"chief", 0, TASK_TYPE_CHIEF},
                        {"ps", 1, TASK_TYPE_PS},
                        {"worker", 1, TASK_TYPE_WORKER},
                        {"evaluator", 0, TASK_TYPE_EVALUATOR}};
  for (const Case& c : cases) {
    absl::StatusOr<ParsedTfConfig> parsed = ParseTfConfig(TfJobConfig(c.type, c.index));
    ASSERT_TRUE(parsed.ok()) << c.type << ": " << parsed.status();
    EXPECT_EQ(parsed->task.type(), c.want);
    EXPECT_EQ(parsed->task.index(), c.index);
    EXPECT_THAT(parsed->cluster.chief(), ElementsAre("mnist-chief-0.kubeflow.svc:2222"));
    EXPECT_THAT(parsed->cluster.ps(),
                ElementsAre("mnist-ps-0.kubeflow.svc:2222", "mnist-ps-1.kubeflow.svc:2222"));
    EXPECT_EQ(parsed->cluster.worker_size(), 2);
    EXPECT_EQ(parsed->cluster.evaluator_size(), 0);
  }
}

TEST(ParseTfConfigTest, AcceptsTfJobMasterAsChief) {
  absl::StatusOr<ParsedTfConfig> parsed = ParseTfConfig(
      R"({"cluster": {"master": ["job-master-0:2222"], "worker": ["job-worker-0:2222"]},
          "task": {"type": "master", "index": 0}, "environment": "cloud"})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->task.type(), TASK_TYPE_CHIEF);
  EXPECT_THAT(parsed->cluster.chief(), ElementsAre("job-master-0:2222"));

  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"master": ["a:1"], "chief": ["b:1"]},
                             "task": {"type": "chief", "index": 0}})")
                              .message()),
              HasSubstr("TF_CONFIG: cluster has both chief and master"));
}

TEST(ParseTfConfigTest, AcceptsListedEvaluatorAndIgnoresUnknownKeys) {
  absl::StatusOr<ParsedTfConfig> parsed = ParseTfConfig(
      R"({"cluster": {"chief": ["c:1"], "evaluator": ["e0:1", "e1:1"], "tpu": ["t:1"]},
          "task": {"type": "evaluator", "index": 1}, "rpc_layer": "grpc"})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->task.index(), 1);
  EXPECT_EQ(parsed->cluster.evaluator_size(), 2);
}

TEST(ParseTfConfigTest, RefusesMalformedJson) {
  const char* bad[] = {
      R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0})",
      R"({"cluster": })",
      "",
      "[]",
      "worker",
  };
  for (const char* json : bad) {
    absl::Status status = ParseError(json);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(std::string(status.message()), StartsWith("TF_CONFIG is not valid JSON: ")) << json;
  }
}

TEST(ParseTfConfigTest, RefusesValuesOfTheWrongType) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"cluster": {"chief": ["c:1"]}, "task": {"type": 3, "index": 0}})", "task.type"},
      {R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0.5}})", "task.index"},
      {R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": "zero"}})",
       "task.index"},
      {R"({"cluster": {"chief": [2222]}, "task": {"type": "chief", "index": 0}})", "cluster.chief"},
      {R"({"cluster": ["c:1"], "task": {"type": "chief", "index": 0}})", "cluster"},
      {R"({"cluster": {"chief": ["c:1"]}, "task": "chief"})", "task"},
  };
  for (const Case& c : cases) {
    absl::Status status = ParseError(c.json);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(std::string(status.message()), StartsWith("TF_CONFIG: ")) << c.json;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message)) << c.json;
  }
}

TEST(ParseTfConfigTest, RefusesMissingOrUnknownTask) {
  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"chief": ["c:1"]}})").message()),
              HasSubstr("TF_CONFIG: task is missing"));
  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"chief": ["c:1"]}, "task": null})").message()),
              HasSubstr("TF_CONFIG: task is missing"));
  EXPECT_THAT(
      std::string(ParseError(R"({"cluster": {"chief": ["c:1"]}, "task": {"index": 0}})").message()),
      HasSubstr("TF_CONFIG: task.type is missing"));
  EXPECT_THAT(
      std::string(
          ParseError(R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "Worker"}})").message()),
      HasSubstr("TF_CONFIG: task.type \"Worker\" is not a task type: want chief, master, ps, "
                "worker or evaluator"));
}

TEST(ParseTfConfigTest, RefusesBadAddresses) {
  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"chief": ["c:1"], "ps": ["p0:1", "localhost"]},
                                         "task": {"type": "chief", "index": 0}})")
                              .message()),
              StartsWith("TF_CONFIG: cluster.ps[1]: 'localhost' is not host:port"));
  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"chief": ["c:1"], "worker": ["w:0"]},
                             "task": {"type": "chief", "index": 0}})")
                              .message()),
              HasSubstr("TF_CONFIG: cluster.worker[0]: 'w:0' is not host:port: port 0"));
  EXPECT_THAT(std::string(ParseError(R"({"cluster": {"chief": ["c:1", "d:1"]},
                             "task": {"type": "chief", "index": 0}})")
                              .message()),
              HasSubstr("TF_CONFIG: cluster.chief has 2 entries; a cluster has at most one chief"));
}

TEST(ParseTfConfigTest, RefusesIndexOutOfRange) {
  EXPECT_EQ(ParseError(TfJobConfig("worker", 3)).message(),
            "TF_CONFIG: task.index 3 is out of range: cluster.worker has 2 entries");
  EXPECT_EQ(ParseError(TfJobConfig("chief", 1)).message(),
            "TF_CONFIG: task.index 1 is out of range: cluster.chief has 1 entry");
  EXPECT_EQ(ParseError(TfJobConfig("ps", -1)).message(),
            "TF_CONFIG: task.index must be >= 0, got -1");
  EXPECT_THAT(std::string(ParseError(TfJobConfig("evaluator", 1)).message()),
              HasSubstr("an unlisted evaluator must have index 0"));
  EXPECT_EQ(ParseError(R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "ps", "index": 0}})")
                .message(),
            "TF_CONFIG: task.index 0 is out of range: cluster.ps has 0 entries");
}

TEST(FormatTfConfigTest, ParsesBackToTheSameClusterAndTask) {
  ClusterSpec cluster;
  cluster.add_chief("pstrain-chief-0.pstrain.svc:2222");
  cluster.add_ps("pstrain-ps-0.pstrain.svc:2222");
  cluster.add_ps("pstrain-ps-1.pstrain.svc:2222");
  cluster.add_worker("pstrain-worker-0.pstrain.svc:2222");
  cluster.add_evaluator("pstrain-evaluator-0.pstrain.svc:2222");
  TaskId task;
  task.set_type(TASK_TYPE_PS);
  task.set_index(1);

  const std::string text = FormatTfConfig(cluster, task);
  absl::StatusOr<ParsedTfConfig> parsed = ParseTfConfig(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(parsed->cluster.SerializeAsString(), cluster.SerializeAsString()) << text;
  EXPECT_EQ(parsed->task.type(), TASK_TYPE_PS);
  EXPECT_EQ(parsed->task.index(), 1);
}

TEST(TaskTypeTest, NamesRoundTrip) {
  for (TaskType type : {TASK_TYPE_CHIEF, TASK_TYPE_PS, TASK_TYPE_WORKER, TASK_TYPE_EVALUATOR}) {
    absl::StatusOr<TaskType> back = TaskTypeFromName(TaskTypeName(type));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, type);
  }
  EXPECT_EQ(TaskTypeName(TASK_TYPE_UNSPECIFIED), "unspecified");
  EXPECT_FALSE(TaskTypeFromName("unspecified").ok());
}

}  // namespace
}  // namespace pstrain
