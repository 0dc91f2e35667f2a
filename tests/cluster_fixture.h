#ifndef PSTRAIN_TESTS_CLUSTER_FIXTURE_H_
#define PSTRAIN_TESTS_CLUSTER_FIXTURE_H_

// A local cluster of real processes on loopback for end-to-end tests, with
// the JobService calls tests make: submit a spec, follow a job's events to
// its end, stop it. Every call has a deadline, so a test that would hang
// fails instead, with the job's last status.

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/local_cluster.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace testing_cluster {

// The longest a test job may take, from submission to its end.
inline constexpr absl::Duration kJobDeadline = absl::Minutes(4);

// Everything WatchJob streamed for one job, and its final status.
struct JobRecord {
  std::vector<JobEvent> events;
  JobStatus final_status;

  std::vector<ProgressEvent> Progress() const;
  std::vector<CheckpointInfo> Checkpoints() const;
  std::vector<EvalEvent> Evaluations() const;  // evaluated and skipped
};

class TestCluster {
 public:
  // Starts the processes; run_dir and checkpoint_root default to folders
  // under the test's temporary folder named `name`.
  static absl::StatusOr<std::unique_ptr<TestCluster>> Start(const std::string& name,
                                                            LocalClusterOptions options);
  // Stops the cluster; ADD_FAILURE when a process did not exit cleanly.
  ~TestCluster();

  LocalCluster& cluster() { return *cluster_; }
  const std::string& checkpoint_root() const { return checkpoint_root_; }
  JobService::Stub& jobs() { return *jobs_; }

  // Submits a text-format JobSpec; the job id, or the refusal.
  absl::StatusOr<std::string> Submit(const std::string& spec_text);

  // Streams the job's events (with progress) until it ends, then reads its
  // final status. `on_event` sees each event as it arrives (it may call
  // Stop). When the coordinator goes away, watches again once a restarted
  // one answers. Fails the test if the job has not ended within
  // kJobDeadline.
  JobRecord Follow(const std::string& job_id,
                   const std::function<void(const JobEvent&)>& on_event = nullptr);
  // Follow, killing task `task` with SIGKILL at the first progress event
  // for which `kill_now` holds, before the next event is read. Events come
  // as the coordinator takes the workers' reports, in order, so the kill
  // follows the report of that event's global step at once, where a poll
  // of the job could see it only steps later, or after the job ended.
  // `kill_now` may wait (for another condition to hold), holding the
  // events back meanwhile. The task is restarted `down_for` later, as
  // Kubernetes restarts a pod, while the job is followed on. *killed_at:
  // the global step of that event, or -1 when nothing was killed.
  JobRecord FollowKilling(const std::string& job_id, const std::string& task,
                          const std::function<bool(const ProgressEvent&)>& kill_now,
                          absl::Duration down_for, int64_t* killed_at);

  absl::StatusOr<JobStatus> Get(const std::string& job_id);
  // Polls job `job_id` until its global step reaches `step`; the step it
  // saw then, or -1 once `ended` is set or kJobDeadline passes first. For a
  // thread that damages the cluster at a given step while Follow runs.
  int64_t AwaitStep(const std::string& job_id, int64_t step, const std::atomic<bool>& ended);
  // Polls job `job_id` until `done` holds of its status, for a state that
  // lasts once reached (RUNNING until stopped, a reason the job keeps while
  // it waits); that status. DeadlineExceeded, with the last status seen,
  // once `timeout` passes first.
  absl::StatusOr<JobStatus> AwaitStatus(const std::string& job_id,
                                        const std::function<bool(const JobStatus&)>& done,
                                        absl::Duration timeout = kJobDeadline);

  // Polls the coordinator's members until task `name` ("ps/1",
  // "worker/0") is in `state` (MEMBER_STATE_LOST once its heartbeats are
  // overdue). DeadlineExceeded, naming its state then, once `timeout`
  // passes first.
  absl::Status AwaitMemberState(const std::string& name, MemberState state, absl::Duration timeout);

  // The sum of the samples of `metric` with every label of `labels` on task
  // `name`'s /metrics page (bench/common/metrics_page.h); 0 when the page
  // has none yet. NotFound: no such task. Otherwise why the page could not
  // be read.
  absl::StatusOr<double> MetricValue(const std::string& name, const std::string& metric,
                                     const std::map<std::string, std::string>& labels = {});
  absl::Status Stop(const std::string& job_id);

  // Sends `signal` to task `name` ("coordinator/0", "ps/1", "worker/0"):
  // SIGKILL as a crash would, SIGTERM as Kubernetes does; waits for it to
  // be gone.
  absl::Status KillTask(const std::string& name, int signal = SIGKILL);
  // Sends `signal` to task `name` and returns at once: SIGSTOP freezes it
  // as a stalled host would, SIGCONT lets it go on.
  absl::Status SignalTask(const std::string& name, int signal);
  // Starts it again with the same flags on the same addresses, so the
  // other processes and this fixture's JobService channel find it again;
  // returns once it serves.
  absl::Status RestartTask(const std::string& name);

 private:
  TestCluster() = default;

  std::string checkpoint_root_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<JobService::Stub> jobs_;
};

// A test that runs on a cluster of its own: SetUp starts a TestCluster of
// options_ (num_ps parameter servers, num_workers workers, LocalCluster's
// defaults otherwise; a derived fixture's constructor may change them) in
// folders named after the test, and fails the test if it cannot.
class ClusterTest : public ::testing::Test {
 protected:
  ClusterTest(int num_ps, int num_workers);
  void SetUp() override;

  LocalClusterOptions options_;
  std::unique_ptr<TestCluster> cluster_;
};

// A suite whose tests run their jobs one after another on one cluster,
// started once for the suite: its SetUpTestSuite calls StartSharedCluster
// with the suite's options; each test fails at once if the cluster did not
// start, and the cluster stops after the suite. `Suite` is the derived
// fixture, so that each suite has a cluster of its own.
template <typename Suite>
class SharedClusterTest : public ::testing::Test {
 protected:
  // Starts the suite's cluster in folders named `name`. False, with a test
  // failure naming why, when it does not start.
  static bool StartSharedCluster(const std::string& name, const LocalClusterOptions& options) {
    absl::StatusOr<std::unique_ptr<TestCluster>> started = TestCluster::Start(name, options);
    if (!started.ok()) {
      ADD_FAILURE() << "the cluster " << name << " did not start: " << started.status();
      return false;
    }
    cluster_ = *std::move(started);
    return true;
  }

  static void TearDownTestSuite() { cluster_.reset(); }

  void SetUp() override { ASSERT_NE(cluster_, nullptr) << "the cluster did not start"; }

  static inline std::unique_ptr<TestCluster> cluster_;
};

}  // namespace testing_cluster
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_CLUSTER_FIXTURE_H_
