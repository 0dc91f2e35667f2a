#include "client/job_text.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(JobTextTest, ClusterTableHasARowPerMemberWithEveryColumn) {
  ClusterStatus cluster;
  cluster.set_queued_jobs(2);
  Member* worker = cluster.add_members();
  worker->mutable_task()->set_type(TASK_TYPE_WORKER);
  worker->set_incarnation(77);
  worker->set_state(MEMBER_STATE_LOST);
  worker->set_last_heartbeat_unix_ms(1'000);
  worker->set_step(1200);
  worker->set_queue_depth(4);
  worker->set_health(MEMBER_HEALTH_DEGRADED);
  worker->set_health_detail("retrying pushes to ps/0");
  const std::string table = FormatClusterTable(cluster, absl::FromUnixMillis(13'700));
  EXPECT_NE(table.find("running job: none; queued jobs: 2"), std::string::npos) << table;
  EXPECT_NE(table.find("MEMBER         ADDRESS"), std::string::npos) << table;
  EXPECT_NE(table.find("worker/0       -                      77                   LOST   12s ago"
                       "   1200     4      DEGRADED: retrying pushes to ps/0"),
            std::string::npos)
      << table;
}

TEST(JobTextTest, JobTableAndStatus) {
  ListJobsResponse jobs;
  EXPECT_EQ(FormatJobTable(jobs), "no jobs\n");
  JobStatus* job = jobs.add_jobs();
  job->set_job_id("clicks-1");
  job->set_state(JOB_STATE_FAILED);
  job->set_reason("ps/0 was lost");
  job->set_global_step(40);
  job->mutable_spec()->mutable_stop()->set_max_steps(100);
  (*job->mutable_last_eval_metrics())["auc"] = 0.75;
  EXPECT_NE(FormatJobTable(jobs).find("clicks-1                     FAILED     40/100"),
            std::string::npos)
      << FormatJobTable(jobs);
  const std::string status = FormatJobStatus(*job, absl::Now());
  EXPECT_NE(status.find("state            FAILED\nreason           ps/0 was lost\n"
                        "step             40/100\n"),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("auc 0.7500"), std::string::npos) << status;
  EXPECT_NE(status.find("train loss"), std::string::npos) << status;
}

TEST(JobTextTest, AJobResumedAtItsEndShowsWhereFromAndNoTrainingLoss) {
  JobStatus job;
  job.set_job_id("clicks-2");
  job.set_state(JOB_STATE_SUCCEEDED);
  job.set_global_step(150);
  job.set_resumed_from_step(150);
  job.set_resumed_from("/tmp/pstrain/clicks/ckpt-150");
  const std::string status = FormatJobStatus(job, absl::Now());
  EXPECT_EQ(status.find("train loss"), std::string::npos) << status;
  EXPECT_NE(status.find("resumed from     /tmp/pstrain/clicks/ckpt-150 (step 150)"),
            std::string::npos)
      << status;
}

TEST(JobTextTest, RollbacksAreCountedWithTheLastOnesCause) {
  JobStatus job;
  job.set_job_id("clicks-3");
  job.set_state(JOB_STATE_RUNNING);
  job.set_global_step(900);
  job.set_rollbacks(1);
  job.set_last_rollback(
      "ps/1 (a parameter server of the job) restarted; rolled back from step 812 to ckpt-800 at "
      "step 800");
  const std::string status = FormatJobStatus(job, absl::Now());
  EXPECT_NE(status.find("rollbacks        1; last: ps/1 (a parameter server of the job) restarted"),
            std::string::npos)
      << status;
}

TEST(JobTextTest, FailedCheckpointsAreCountedWithTheLastOnesCause) {
  JobStatus job;
  job.set_job_id("clicks-4");
  job.set_state(JOB_STATE_RUNNING);
  job.set_checkpoint_failures(2);
  job.set_last_checkpoint_failure("ckpt-800 (2 in a row of at most 3): No space left on device");
  const std::string status = FormatJobStatus(job, absl::Now());
  EXPECT_NE(status.find("failed ckpts     2; last: ckpt-800 (2 in a row of at most 3): No space "
                        "left on device"),
            std::string::npos)
      << status;
  EXPECT_EQ(FormatJobStatus(JobStatus(), absl::Now()).find("failed ckpts"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
