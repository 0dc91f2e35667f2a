#include "server/coordinator/job_queue.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

JobSpec Spec(const std::string& name) {
  JobSpec spec;
  const bool parsed =
      google::protobuf::TextFormat::ParseFromString(R"pb(
                                                      model { mlp {} }
                                                      train_data { fashion_mnist {} }
                                                      eval_data { fashion_mnist {} }
                                                      stop { max_steps: 1000 }
                                                      checkpoint { model_dir: "/tmp/pstrain/mlp" }
                                                    )pb",
                                                    &spec);
  EXPECT_TRUE(parsed);
  spec.set_name(name);
  return spec;
}

std::vector<std::string> Ids(const std::vector<JobStatus>& jobs) {
  std::vector<std::string> ids;
  for (const JobStatus& job : jobs) ids.push_back(job.job_id());
  return ids;
}

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { queue_ = MakeQueue({}); }

  std::unique_ptr<JobQueue> MakeQueue(JobQueueOptions options) {
    absl::StatusOr<std::unique_ptr<JobQueue>> queue = JobQueue::Create(clock_, options);
    EXPECT_TRUE(queue.ok()) << queue.status();
    return queue.ok() ? std::move(*queue) : nullptr;
  }

  // Submits a job and returns its id.
  std::string SubmitJob(const std::string& name) {
    absl::StatusOr<JobStatus> job = queue_->Submit(Spec(name));
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->job_id() : "";
  }

  FakeClock clock_;
  std::unique_ptr<JobQueue> queue_;
};

TEST_F(JobQueueTest, SubmitQueuesTheFilledSpecUnderAReadableUniqueId) {
  absl::StatusOr<JobStatus> first = queue_->Submit(Spec("mnist"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->job_id(), "mnist-1");
  EXPECT_EQ(first->name(), "mnist");
  EXPECT_EQ(first->state(), JOB_STATE_QUEUED);
  EXPECT_EQ(first->submit_unix_ms(), absl::ToUnixMillis(clock_.Now()));
  EXPECT_EQ(first->spec().checkpoint().max_to_keep(), 5);  // a default, filled in

  absl::StatusOr<JobStatus> second = queue_->Submit(Spec("mnist"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->job_id(), "mnist-2");
  EXPECT_EQ(queue_->queued_count(), 2);
}

TEST_F(JobQueueTest, UnnamedJobIsCalledJob) { EXPECT_EQ(SubmitJob(""), "job-1"); }

TEST_F(JobQueueTest, InvalidSpecIsRefusedNamingTheFieldAndQueuesNothing) {
  JobSpec spec = Spec("bad");
  spec.mutable_optimizer()->set_learning_rate(-1);
  absl::StatusOr<JobStatus> job = queue_->Submit(spec);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(job.status().message(), HasSubstr("optimizer.learning_rate"));
  EXPECT_EQ(queue_->queued_count(), 0);
  EXPECT_THAT(queue_->List({}, 0).value(), IsEmpty());
}

TEST_F(JobQueueTest, FullQueueIsResourceExhausted) {
  JobQueueOptions options;
  options.max_queued_jobs = 2;
  queue_ = MakeQueue(options);
  SubmitJob("a");
  SubmitJob("b");
  EXPECT_EQ(queue_->Submit(Spec("c")).status().code(), absl::StatusCode::kResourceExhausted);
  // Running one makes room.
  ASSERT_TRUE(queue_->StartNext().ok());
  EXPECT_TRUE(queue_->Submit(Spec("c")).ok());
}

TEST_F(JobQueueTest, JobsRunOneAtATimeInSubmissionOrder) {
  const std::string a = SubmitJob("a");
  const std::string b = SubmitJob("b");
  clock_.Advance(absl::Seconds(5));

  absl::StatusOr<JobStatus> started = queue_->StartNext();
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->job_id(), a);
  EXPECT_EQ(started->state(), JOB_STATE_RUNNING);
  EXPECT_EQ(started->start_unix_ms(), absl::ToUnixMillis(clock_.Now()));
  EXPECT_EQ(queue_->active_job_id(), a);

  absl::StatusOr<JobStatus> second = queue_->StartNext();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("a-1 is RUNNING; one job runs at a time"));

  ASSERT_TRUE(queue_->BeginFinishing(a, STOP_REASON_MAX_STEPS, "reached max_steps 1000").ok());
  EXPECT_EQ(queue_->StartNext().status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(queue_->End(a, JOB_STATE_SUCCEEDED, "").ok());

  started = queue_->StartNext();
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->job_id(), b);
}

TEST_F(JobQueueTest, StartNextWithNothingQueuedIsNotFound) {
  EXPECT_EQ(queue_->StartNext().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue_->active_job_id(), std::nullopt);
}

TEST_F(JobQueueTest, FinishedJobKeepsItsStopReasonAndStatusInTheHistory) {
  const std::string id = SubmitJob("mnist");
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_->RecordProgress(id, 1000, 0.25, 5000).ok());
  ASSERT_TRUE(queue_->BeginFinishing(id, STOP_REASON_MAX_STEPS, "reached max_steps 1000").ok());
  clock_.Advance(absl::Seconds(30));
  absl::StatusOr<JobStatus> ended = queue_->End(id, JOB_STATE_SUCCEEDED, "");
  ASSERT_TRUE(ended.ok()) << ended.status();

  absl::StatusOr<JobStatus> job = queue_->Get(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job->stop_reason(), STOP_REASON_MAX_STEPS);
  EXPECT_EQ(job->reason(), "reached max_steps 1000");
  EXPECT_EQ(job->global_step(), 1000);
  EXPECT_DOUBLE_EQ(job->loss(), 0.25);
  EXPECT_EQ(job->end_unix_ms(), absl::ToUnixMillis(clock_.Now()));
  EXPECT_EQ(queue_->active_job_id(), std::nullopt);
}

TEST_F(JobQueueTest, IllegalTransitionsAreFailedPreconditionAndChangeNothing) {
  const std::string queued = SubmitJob("queued");
  EXPECT_EQ(queue_->BeginFinishing(queued, STOP_REASON_MAX_STEPS, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<JobStatus> end = queue_->End(queued, JOB_STATE_SUCCEEDED, "");
  EXPECT_EQ(end.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(end.status().message(), HasSubstr("is QUEUED; it cannot become SUCCEEDED"));
  EXPECT_EQ(queue_->Get(queued)->state(), JOB_STATE_QUEUED);

  ASSERT_TRUE(queue_->StartNext().ok());
  // Success comes only after the final checkpoint and evaluation.
  EXPECT_EQ(queue_->End(queued, JOB_STATE_SUCCEEDED, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->End(queued, JOB_STATE_STOPPED, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Get(queued)->state(), JOB_STATE_RUNNING);

  ASSERT_TRUE(queue_->BeginFinishing(queued, STOP_REASON_MAX_STEPS, "done").ok());
  EXPECT_EQ(queue_->BeginFinishing(queued, STOP_REASON_MAX_STEPS, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(queue_->End(queued, JOB_STATE_SUCCEEDED, "").ok());
  // Ended is final.
  EXPECT_EQ(queue_->End(queued, JOB_STATE_FAILED, "late error").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Get(queued)->state(), JOB_STATE_SUCCEEDED);
}

TEST_F(JobQueueTest, EndRefusesNonFinalStatesAndReasonlessFailures) {
  const std::string id = SubmitJob("a");
  ASSERT_TRUE(queue_->StartNext().ok());
  EXPECT_EQ(queue_->End(id, JOB_STATE_RUNNING, "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->End(id, JOB_STATE_FAILED, "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(JobQueueTest, RunningJobCanFailWithAnErrorReason) {
  const std::string id = SubmitJob("a");
  ASSERT_TRUE(queue_->StartNext().ok());
  absl::StatusOr<JobStatus> failed =
      queue_->End(id, JOB_STATE_FAILED, "ps/1 could not create variable dense/kernel");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->stop_reason(), STOP_REASON_ERROR);
  EXPECT_EQ(failed->reason(), "ps/1 could not create variable dense/kernel");
}

TEST_F(JobQueueTest, UserStopOfAQueuedJobStopsItAtOnce) {
  const std::string a = SubmitJob("a");
  const std::string b = SubmitJob("b");
  absl::StatusOr<JobStatus> stopped = queue_->Stop(a);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state(), JOB_STATE_STOPPED);
  EXPECT_EQ(stopped->stop_reason(), STOP_REASON_USER);
  EXPECT_EQ(queue_->queued_count(), 1);
  EXPECT_EQ(queue_->StartNext()->job_id(), b);
}

TEST_F(JobQueueTest, UserStopOfARunningJobFinishesItThenItEndsStopped) {
  const std::string id = SubmitJob("a");
  ASSERT_TRUE(queue_->StartNext().ok());
  absl::StatusOr<JobStatus> stopping = queue_->Stop(id);
  ASSERT_TRUE(stopping.ok());
  EXPECT_EQ(stopping->state(), JOB_STATE_FINISHING);
  EXPECT_EQ(stopping->stop_reason(), STOP_REASON_USER);
  // A second stop, or one after the end, returns the job as it is.
  EXPECT_EQ(queue_->Stop(id)->state(), JOB_STATE_FINISHING);
  ASSERT_TRUE(queue_->End(id, EndStateFor(STOP_REASON_USER), "").ok());
  absl::StatusOr<JobStatus> again = queue_->Stop(id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state(), JOB_STATE_STOPPED);
  EXPECT_EQ(again->reason(), "stopped by a user");
}

TEST_F(JobQueueTest, StopAfterAnotherStopReasonKeepsTheFirst) {
  const std::string id = SubmitJob("a");
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_->BeginFinishing(id, STOP_REASON_NAN_LOSS, "loss is NaN at step 12").ok());
  absl::StatusOr<JobStatus> job = queue_->Stop(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->stop_reason(), STOP_REASON_NAN_LOSS);
}

TEST_F(JobQueueTest, UnknownJobIsNotFoundWithItsId) {
  absl::StatusOr<JobStatus> job = queue_->Get("nope-7");
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(job.status().message(), HasSubstr("nope-7"));
  EXPECT_EQ(queue_->Stop("nope-7").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue_->RecordProgress("nope-7", 1, 0, 0).code(), absl::StatusCode::kNotFound);
}

TEST_F(JobQueueTest, ProgressForAJobThatIsNotRunningIsFailedPrecondition) {
  const std::string id = SubmitJob("a");
  EXPECT_EQ(queue_->RecordProgress(id, 5, 1.0, 10).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_->End(id, JOB_STATE_FAILED, "broken").ok());
  EXPECT_EQ(queue_->RecordProgress(id, 5, 1.0, 10).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Get(id)->global_step(), 0);
}

TEST_F(JobQueueTest, ListFiltersByStateNewestFirstWithALimit) {
  const std::string a = SubmitJob("a");
  const std::string b = SubmitJob("b");
  const std::string c = SubmitJob("c");
  const std::string d = SubmitJob("d");
  ASSERT_TRUE(queue_->StartNext().ok());  // a
  ASSERT_TRUE(queue_->End(a, JOB_STATE_FAILED, "broken").ok());
  ASSERT_TRUE(queue_->Stop(c).ok());

  EXPECT_THAT(Ids(queue_->List({}, 0).value()), ElementsAre(d, c, b, a));
  EXPECT_THAT(Ids(queue_->List({}, 2).value()), ElementsAre(d, c));
  EXPECT_THAT(Ids(queue_->List({JOB_STATE_QUEUED}, 0).value()), ElementsAre(d, b));
  EXPECT_THAT(Ids(queue_->List({JOB_STATE_FAILED, JOB_STATE_STOPPED}, 0).value()),
              ElementsAre(c, a));
  EXPECT_EQ(queue_->List({}, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(JobQueueTest, HistoryForgetsTheOldestEndedJobsBeyondItsLimit) {
  JobQueueOptions options;
  options.max_ended_jobs = 2;
  queue_ = MakeQueue(options);
  std::vector<std::string> ids;
  for (const char* name : {"a", "b", "c"}) ids.push_back(SubmitJob(name));
  const std::string queued = SubmitJob("d");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(queue_->StartNext().ok());
    ASSERT_TRUE(queue_->End(ids[i], JOB_STATE_FAILED, "broken").ok());
  }
  EXPECT_EQ(queue_->Get(ids[0]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(queue_->Get(ids[1]).ok());
  EXPECT_TRUE(queue_->Get(ids[2]).ok());
  EXPECT_TRUE(queue_->Get(queued).ok());  // queued jobs are never forgotten
  // Ids stay unique after forgetting.
  EXPECT_EQ(SubmitJob("a"), "a-5");
}

TEST_F(JobQueueTest, UpdateStatusCannotChangeWhatTheQueueOwns) {
  const std::string id = SubmitJob("a");
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_
                  ->UpdateStatus(id,
                                 [](JobStatus& job) {
                                   job.set_state(JOB_STATE_SUCCEEDED);
                                   job.set_job_id("other");
                                   job.mutable_spec()->set_name("other");
                                   job.set_last_eval_step(300);
                                   (*job.mutable_last_eval_metrics())["accuracy"] = 0.8;
                                   job.set_reason("waiting for ps/1 since 12s");
                                 })
                  .ok());
  absl::StatusOr<JobStatus> job = queue_->Get(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), JOB_STATE_RUNNING);
  EXPECT_EQ(job->spec().name(), "a");
  EXPECT_EQ(job->last_eval_step(), 300);
  EXPECT_DOUBLE_EQ(job->last_eval_metrics().at("accuracy"), 0.8);
  EXPECT_EQ(job->reason(), "waiting for ps/1 since 12s");
  EXPECT_EQ(queue_->active_job_id(), id);
}

// ---- Recovery after a coordinator restart.

// A job as the journal of a previous coordinator process kept it.
JobStatus Journaled(const std::string& job_id, JobState state) {
  JobStatus job;
  job.set_job_id(job_id);
  job.set_name(job_id.substr(0, job_id.rfind('-')));
  job.set_state(state);
  job.set_submit_unix_ms(1000);
  if (state != JOB_STATE_QUEUED) job.set_start_unix_ms(2000);
  *job.mutable_spec() = Spec(job.name());
  return job;
}

TEST_F(JobQueueTest, RecoveredRunningJobStartsFirstUnderItsIdThenTheQueuedOnesInOrder) {
  ASSERT_TRUE(queue_->Recover(Journaled("mnist-4", JOB_STATE_RUNNING), "resuming").ok());
  absl::StatusOr<JobStatus> queued = queue_->Recover(Journaled("mnist-6", JOB_STATE_QUEUED), "");
  ASSERT_TRUE(queued.ok()) << queued.status();
  ASSERT_TRUE(queue_->Recover(Journaled("cnn-7", JOB_STATE_QUEUED), "").ok());
  EXPECT_EQ(queue_->queued_count(), 3);

  absl::StatusOr<JobStatus> waiting = queue_->Get("mnist-4");
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->state(), JOB_STATE_QUEUED);
  EXPECT_EQ(waiting->reason(), "resuming");
  EXPECT_EQ(waiting->submit_unix_ms(), 1000);
  // Not started yet in this process: a stop now ends it before it starts.
  EXPECT_EQ(waiting->start_unix_ms(), 0);

  std::vector<std::string> started;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<JobStatus> job = queue_->StartNext();
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->state(), JOB_STATE_RUNNING);
    started.push_back(job->job_id());
    ASSERT_TRUE(queue_->End(job->job_id(), JOB_STATE_FAILED, "done with it").ok());
  }
  EXPECT_THAT(started, ElementsAre("mnist-4", "mnist-6", "cnn-7"));
  // The next id is above every recovered one: no id is given twice.
  EXPECT_EQ(SubmitJob("mnist"), "mnist-8");
}

TEST_F(JobQueueTest, RecoveredEndedJobIsAnsweredAsItEnded) {
  JobStatus ended = Journaled("mnist-2", JOB_STATE_SUCCEEDED);
  ended.set_global_step(1000);
  ended.set_reason("reached max_steps");
  ASSERT_TRUE(queue_->Recover(ended, "ignored for an ended job").ok());
  absl::StatusOr<JobStatus> got = queue_->Get("mnist-2");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state(), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(got->global_step(), 1000);
  EXPECT_EQ(got->reason(), "reached max_steps");
  EXPECT_EQ(queue_->queued_count(), 0);
  EXPECT_FALSE(queue_->StartNext().ok());
}

TEST_F(JobQueueTest, RecoverRefusesDuplicatesAndIdsWithoutANumber) {
  ASSERT_TRUE(queue_->Recover(Journaled("mnist-3", JOB_STATE_QUEUED), "").ok());
  EXPECT_EQ(queue_->Recover(Journaled("mnist-3", JOB_STATE_QUEUED), "").status().code(),
            absl::StatusCode::kAlreadyExists);
  // Another name, the same number: ids are numbered by one counter.
  EXPECT_EQ(queue_->Recover(Journaled("cnn-3", JOB_STATE_QUEUED), "").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(queue_->Recover(Journaled("mnist", JOB_STATE_QUEUED), "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Recover(Journaled("mnist-0", JOB_STATE_QUEUED), "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Recover(Journaled("mnist-9", JOB_STATE_UNSPECIFIED), "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(JobQueueTest, RecoverKeepsEveryQueuedJobBeyondTheQueueLimit) {
  JobQueueOptions options;
  options.max_queued_jobs = 1;
  queue_ = MakeQueue(options);
  ASSERT_TRUE(queue_->Recover(Journaled("a-1", JOB_STATE_QUEUED), "").ok());
  ASSERT_TRUE(queue_->Recover(Journaled("a-2", JOB_STATE_QUEUED), "").ok());
  EXPECT_EQ(queue_->queued_count(), 2);
  EXPECT_EQ(queue_->Submit(Spec("a")).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(JobQueueTest, ReservedNumbersAreNeverGiven) {
  queue_->ReserveNumbersThrough(41);
  EXPECT_EQ(SubmitJob("mnist"), "mnist-42");
  queue_->ReserveNumbersThrough(7);  // never goes back
  EXPECT_EQ(SubmitJob("mnist"), "mnist-43");
}

TEST_F(JobQueueTest, WithdrawnJobIsGoneAndItsNumberNotGivenAgain) {
  const std::string first = SubmitJob("mnist");
  const std::string second = SubmitJob("mnist");
  ASSERT_TRUE(queue_->Withdraw(first).ok());
  EXPECT_EQ(queue_->Get(first).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue_->queued_count(), 1);
  EXPECT_EQ(SubmitJob("mnist"), "mnist-3");
  absl::StatusOr<JobStatus> running = queue_->StartNext();
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->job_id(), second);
  EXPECT_EQ(queue_->Withdraw(second).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Withdraw("nope-1").code(), absl::StatusCode::kNotFound);
}

TEST(JobNumberFromIdTest, ReadsTheNumberAfterTheLastDash) {
  EXPECT_EQ(JobNumberFromId("mnist-12"), 12);
  EXPECT_EQ(JobNumberFromId("wide-and-deep-3"), 3);
  EXPECT_EQ(JobNumberFromId("mnist"), std::nullopt);
  EXPECT_EQ(JobNumberFromId("mnist-"), std::nullopt);
  EXPECT_EQ(JobNumberFromId("mnist-x1"), std::nullopt);
  EXPECT_EQ(JobNumberFromId("mnist--4"), 4);
  EXPECT_EQ(JobNumberFromId("mnist-0"), std::nullopt);
}

TEST(JobQueueCreateTest, RefusesEmptyLimits) {
  FakeClock clock;
  JobQueueOptions options;
  options.max_queued_jobs = 0;
  EXPECT_EQ(JobQueue::Create(clock, options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EndStateForTest, MapsStopReasonsToTheStatesUsersSee) {
  EXPECT_EQ(EndStateFor(STOP_REASON_MAX_STEPS), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(EndStateFor(STOP_REASON_MAX_SECONDS), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(EndStateFor(STOP_REASON_END_OF_DATA), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(EndStateFor(STOP_REASON_TARGET_METRIC), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(EndStateFor(STOP_REASON_EARLY_STOPPING), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(EndStateFor(STOP_REASON_NAN_LOSS), JOB_STATE_FAILED);
  EXPECT_EQ(EndStateFor(STOP_REASON_ERROR), JOB_STATE_FAILED);
  EXPECT_EQ(EndStateFor(STOP_REASON_CHECKPOINT_FAILURES), JOB_STATE_FAILED);
  EXPECT_EQ(EndStateFor(STOP_REASON_USER), JOB_STATE_STOPPED);
}

TEST(JobStateNameTest, DropsThePrefix) {
  EXPECT_EQ(JobStateName(JOB_STATE_FINISHING), "FINISHING");
}

TEST_F(JobQueueTest, AFullQueueNamesItsLimitAndTheFlag) {
  JobQueueOptions options;
  options.max_queued_jobs = 1;
  queue_ = MakeQueue(options);
  SubmitJob("a");
  const absl::Status status = queue_->Submit(Spec("b")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("1 jobs are waiting"));
  EXPECT_THAT(status.message(), HasSubstr("(--max_queued_jobs)"));
}

TEST_F(JobQueueTest, AdmissionSeesTheFilledSpecAndMayAddToIt) {
  JobQueueOptions options;
  options.admit = [](JobSpec& spec) {
    EXPECT_EQ(spec.checkpoint().model_dir(), "/tmp/pstrain/mlp");
    spec.mutable_model()->mutable_mlp()->set_dropout(0.25f);
    return absl::OkStatus();
  };
  queue_ = MakeQueue(options);
  absl::StatusOr<JobStatus> job = queue_->Submit(Spec("a"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_FLOAT_EQ(queue_->Get(job->job_id())->spec().model().mlp().dropout(), 0.25f);
}

TEST_F(JobQueueTest, ARefusedAdmissionQueuesNothingAndUsesNoId) {
  JobQueueOptions options;
  options.admit = [](JobSpec& spec) {
    if (spec.name() == "big") return absl::InvalidArgumentError("the job needs too much");
    return absl::OkStatus();
  };
  queue_ = MakeQueue(options);
  EXPECT_EQ(queue_->Submit(Spec("big")).status(),
            absl::InvalidArgumentError("the job needs too much"));
  EXPECT_EQ(queue_->queued_count(), 0);
  EXPECT_THAT(*queue_->List({}, 0), IsEmpty());
  EXPECT_EQ(SubmitJob("small"), "small-1");
}

TEST_F(JobQueueTest, AFullQueueRefusesBeforeAdmissionRuns) {
  JobQueueOptions options;
  options.max_queued_jobs = 1;
  int admissions = 0;
  options.admit = [&admissions](JobSpec&) {
    ++admissions;
    return absl::OkStatus();
  };
  queue_ = MakeQueue(options);
  SubmitJob("a");
  EXPECT_EQ(queue_->Submit(Spec("b")).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(admissions, 1);
}

TEST_F(JobQueueTest, AdmitQueuesNothingUntilEnqueueAndAQueueFilledMeanwhileRefuses) {
  JobQueueOptions options;
  options.max_queued_jobs = 1;
  queue_ = MakeQueue(options);
  absl::StatusOr<JobSpec> first = queue_->Admit(Spec("a"));
  absl::StatusOr<JobSpec> second = queue_->Admit(Spec("b"));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(queue_->queued_count(), 0);
  EXPECT_EQ(second->checkpoint().max_to_keep(), 5);  // a default, filled in
  absl::StatusOr<JobStatus> queued = queue_->Enqueue(*std::move(first));
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_EQ(queued->job_id(), "a-1");
  EXPECT_EQ(queue_->Enqueue(*std::move(second)).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(queue_->queued_count(), 1);
}

// ---- Request ids: a submit sent again finds the job it queued.

TEST_F(JobQueueTest, ARequestIdFindsItsJobWhileTheQueueKnowsIt) {
  JobQueueOptions options;
  options.max_ended_jobs = 1;
  queue_ = MakeQueue(options);
  absl::StatusOr<JobSpec> admitted = queue_->Admit(Spec("a"));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  absl::StatusOr<JobStatus> queued = queue_->Enqueue(*admitted, "r1");
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_EQ(queued->request_id(), "r1");

  absl::StatusOr<std::optional<JobStatus>> found = queue_->FindSubmitted("r1", *admitted);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->job_id(), "a-1");
  EXPECT_EQ(queue_->FindSubmitted("r2", *admitted).value(), std::nullopt);
  EXPECT_EQ(queue_->FindSubmitted("", *admitted).value(), std::nullopt);
  // The same id again cannot queue a second job.
  EXPECT_EQ(queue_->Enqueue(*admitted, "r1").status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(queue_->queued_count(), 1);

  // The id of a job with another spec is refused, naming the job.
  JobSpec other = *admitted;
  other.mutable_stop()->set_max_steps(2000);
  found = queue_->FindSubmitted("r1", other);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("queued job a-1 with another spec"));

  // Still found once the job ended; forgotten with it from the history.
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_->End("a-1", JOB_STATE_FAILED, "broken").ok());
  EXPECT_TRUE(queue_->FindSubmitted("r1", *admitted).value().has_value());
  const std::string b = SubmitJob("b");
  ASSERT_TRUE(queue_->StartNext().ok());
  ASSERT_TRUE(queue_->End(b, JOB_STATE_FAILED, "broken").ok());
  EXPECT_EQ(queue_->FindSubmitted("r1", *admitted).value(), std::nullopt);
}

TEST_F(JobQueueTest, ARecoveredJobKeepsItsRequestId) {
  JobStatus job = Journaled("mnist-4", JOB_STATE_QUEUED);
  job.set_request_id("r4");
  ASSERT_TRUE(queue_->Recover(job, "").ok());
  absl::StatusOr<std::optional<JobStatus>> found = queue_->FindSubmitted("r4", job.spec());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->job_id(), "mnist-4");
  JobStatus twin = Journaled("mnist-5", JOB_STATE_QUEUED);
  twin.set_request_id("r4");
  EXPECT_EQ(queue_->Recover(twin, "").status().code(), absl::StatusCode::kAlreadyExists);
  // Withdrawn, the job and its id are gone.
  ASSERT_TRUE(queue_->Withdraw("mnist-4").ok());
  EXPECT_EQ(queue_->FindSubmitted("r4", job.spec()).value(), std::nullopt);
}

TEST(ValidateRequestIdTest, TakesPrintableAsciiUpTo128Characters) {
  EXPECT_TRUE(ValidateRequestId("").ok());
  EXPECT_TRUE(ValidateRequestId("3f2a-retry_1").ok());
  EXPECT_TRUE(ValidateRequestId(std::string(128, 'x')).ok());
  EXPECT_THAT(std::string(ValidateRequestId(std::string(129, 'x')).message()),
              HasSubstr("129 characters; at most 128"));
  EXPECT_THAT(std::string(ValidateRequestId("a b").message()), HasSubstr("(byte 32 at 1)"));
  EXPECT_EQ(ValidateRequestId("caf\xc3\xa9").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
