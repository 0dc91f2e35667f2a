// Training data larger than a worker may hold: TFRecord files of 180,000
// Fashion-MNIST images (575 MB; 564 MB of examples once decoded), streamed
// by workers whose data segment the kernel caps at 256 MB (RLIMIT_DATA, what
// `ulimit -d` sets). The same cap makes the single-process trainer, which
// holds the examples, fail at once.

#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

using testing_cluster::TestCluster;

// Under half the data's 564 MB, with room above the 180 MB a streaming worker's
// data segment holds (most of it thread stacks: every private writable
// mapping counts).
constexpr int64_t kCapBytes = int64_t{256} << 20;

// A line "<field>: <n> kB" of /proc/<pid>/status, in bytes; -1 if missing.
int64_t ProcStatusBytes(int pid, const std::string& field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

TEST(StreamingTest, WorkersCappedBelowTheDataSizeTrainOnStreamedFiles) {
  // Fashion-MNIST's training set three times over, as three TFRecord files.
  const std::string data_dir = testing::TempDir() + "/streamed_fashion_mnist";
  ExitStatus exit;
  const std::string written = RunPstrain(
      {"write-tfrecord", "examples/fashion_mnist_mlp.pbtxt", "--tfrecord_dir=" + data_dir}, &exit);
  ASSERT_EQ(exit.exit_code, 0) << written;
  for (const char* copy : {"/train-copy-1.tfrecord", "/train-copy-2.tfrecord"}) {
    std::filesystem::copy_file(data_dir + "/train.tfrecord", data_dir + copy,
                               std::filesystem::copy_options::overwrite_existing);
  }
  const int64_t data_bytes =
      3 * static_cast<int64_t>(std::filesystem::file_size(data_dir + "/train.tfrecord"));
  ASSERT_GT(data_bytes, 2 * kCapBytes);

  std::stringstream example;
  example << std::ifstream("examples/fashion_mnist_tfrecord.pbtxt").rdbuf();
  const std::string streamed_spec = absl::StrReplaceAll(
      example.str(),
      {{"/tmp/pstrain-data/fashion_mnist/train.tfrecord", data_dir + "/train*"},
       {"/tmp/pstrain-data/fashion_mnist", data_dir},
       {"shuffle: true", "shuffle: true read_mode: READ_MODE_STREAMED"},
       {"max_steps: 3000", "max_steps: 800"},
       {"decay_steps: 3000", "decay_steps: 800"},
       {"model_dir: \"fashion_mnist_tfrecord\"", "model_dir: \"streamed_fashion_mnist\""}});
  ASSERT_NE(streamed_spec.find(data_dir + "/train*"), std::string::npos) << streamed_spec;
  ASSERT_NE(streamed_spec.find("READ_MODE_STREAMED"), std::string::npos) << streamed_spec;

  // `pstrain index-data` indexes the files ahead of the job, once.
  const std::string streamed_path = testing::TempDir() + "/streamed.pbtxt";
  std::ofstream(streamed_path) << streamed_spec;
  for (const char* expected : {"indexed (no index yet)", "its index is current"}) {
    const std::string indexed = RunPstrain({"index-data", streamed_path}, &exit);
    EXPECT_EQ(exit.exit_code, 0) << indexed;
    EXPECT_NE(indexed.find(data_dir +
                           "/train-copy-2.tfrecord: 60000 records in 59 blocks of up "
                           "to 1024; " +
                           expected),
              std::string::npos)
        << indexed;
  }

  // The cap bites: holding the examples in memory fails under it.
  const std::string in_memory_path = testing::TempDir() + "/in_memory.pbtxt";
  std::ofstream(in_memory_path) << absl::StrReplaceAll(
      streamed_spec, {{"READ_MODE_STREAMED", "READ_MODE_IN_MEMORY"}});
  const std::string refused = RunPstrain({"train-local", in_memory_path}, &exit, kCapBytes);
  EXPECT_FALSE(exit.ok()) << refused;
  EXPECT_NE(refused.find("std::bad_alloc"), std::string::npos) << refused;

  LocalClusterOptions options;
  options.num_ps = 1;
  options.num_workers = 2;
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start("streaming", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<LocalTask> workers;
  for (const LocalTask& task : (*cluster)->cluster().tasks()) {
    if (task.role != "worker") continue;
    workers.push_back(task);
    const struct rlimit cap = {static_cast<rlim_t>(kCapBytes), static_cast<rlim_t>(kCapBytes)};
    ASSERT_EQ(::prlimit(task.pid, RLIMIT_DATA, &cap, nullptr), 0) << task.name();
    EXPECT_LT(ProcStatusBytes(task.pid, "VmData"), kCapBytes) << task.name();
  }
  ASSERT_EQ(workers.size(), 2u);

  absl::StatusOr<std::string> job_id = (*cluster)->Submit(streamed_spec);
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  const JobStatus status = (*cluster)->Follow(*job_id).final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  ASSERT_TRUE(status.last_eval_metrics().contains("accuracy")) << status.ShortDebugString();
  std::cout << "streamed fashion-mnist: test accuracy " << status.last_eval_metrics().at("accuracy")
            << " at step " << status.global_step() << " from " << data_bytes / (1 << 20)
            << " MB of files\n";
  EXPECT_GE(status.last_eval_metrics().at("accuracy"), 0.83) << status.ShortDebugString();

  for (const LocalTask& worker : workers) {
    const int64_t peak = ProcStatusBytes(worker.pid, "VmHWM");
    std::cout << worker.name() << ": peak RSS " << peak / (1 << 20) << " MB, data segment "
              << ProcStatusBytes(worker.pid, "VmData") / (1 << 20) << " MB (cap "
              << kCapBytes / (1 << 20) << " MB)\n";
    EXPECT_GT(peak, 0) << worker.name();
    EXPECT_LT(peak, kCapBytes) << worker.name();
    const std::string log = ReadFile(worker.log_path);
    EXPECT_NE(log.find("tfrecord: streaming 180000 records"), std::string::npos)
        << worker.name() << " log:\n"
        << log;
  }
}

}  // namespace
}  // namespace pstrain
