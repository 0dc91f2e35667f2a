// The worker loop against the real coordinator, served in this process
// (InProcessCoordinator, jobs planned from their specs as in production),
// and two real parameter servers behind faulty wires (WiredShard), which
// ps/0 and ps/1 register with; the coordinator sets each job up on them
// and drops it at its end, as in production. The test submits each job;
// its data (records per lease, epochs) and stop conditions decide the
// leases and when the coordinator answers stop. What the worker sent and
// the coordinator accepted is read from the worker's channel
// (CoordinatorCallLog), what it pushed and the shards answered from the
// wires (which outlive the job's variables on the shards).

#include "worker/worker_loop.h"

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_writer.h"
#include "common/placement/row_placement.h"
#include "common/status/error_reason.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/coordinator/testing/coordinator_call_log.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "server/ps/testing/wired_shard.h"

namespace pstrain {
namespace worker {
namespace {

using coordinator::CoordinatorCallLog;
using coordinator::InProcessCoordinator;

constexpr absl::Duration kWait = absl::Seconds(30);

// Logistic regression over synthetic click logs: `num_examples` records of
// 2 fields, ids in [0, 20), batches of 8. Its variables: the table
// "linear/weights" [20, 1] (rows on both shards) and "linear/bias" [1]
// (on shard 0).
JobSpec Spec(UpdateMode mode, int steps_per_loop, int num_examples = 64, int epochs = 1) {
  JobSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        mode: JOB_MODE_TRAIN
        model { logistic_regression {} }
        train_data {
          synthetic_clicks { num_fields: 2 vocabulary_per_field: 10 seed: 3 }
          batch_size: 8
          shuffle: true
          prefetch_batches: 2
        }
      )pb",
      &spec));
  spec.mutable_train_data()->mutable_synthetic_clicks()->set_num_examples(num_examples);
  spec.mutable_train_data()->set_epochs(epochs);
  spec.mutable_training()->set_update_mode(mode);
  spec.mutable_training()->set_steps_per_loop(steps_per_loop);
  return spec;
}

std::unique_ptr<WorkerLoop> NewLoop(CoordinatorClient& client, Clock& clock, RandomSource& random,
                                    WorkerMetrics* metrics, bool overlap = true) {
  WorkerLoopOptions options;
  options.overlap_pull_with_push = overlap;
  options.assignment_wait = absl::Milliseconds(200);
  options.round_wait = absl::Seconds(1);
  options.backoff.initial_backoff = absl::Milliseconds(5);
  return std::make_unique<WorkerLoop>(client, options, clock, random, metrics);
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = NewTestDir(env_);
    InProcessShardOptions options;
    // The coordinator's checkpoints are written under root_.
    options.store.checkpoint_root = root_;
    for (int s = 0; s < 2; ++s) {
      absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start(options);
      ASSERT_TRUE(shard.ok()) << shard.status();
      shards_.push_back(*std::move(shard));
    }
    metrics_ = std::make_unique<WorkerMetrics>(registry_);
  }

  // Starts the coordinator, whose jobs lease `records_per_lease` records at
  // a time, and registers the worker (worker/0) and the parameter servers.
  // With `num_workers` 2, worker/1 registers too and never trains: the
  // other workers of a sync job have stopped.
  void StartCoordinator(int records_per_lease, int num_workers = 1) {
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root_;
    options.runner.num_ps = num_ps_;
    options.runner.num_workers = num_workers;
    options.runner.records_per_lease = records_per_lease;
    // Heartbeats of a worker on a real clock come quickly.
    options.membership.heartbeat_interval = absl::Milliseconds(20);
    coordinator_ =
        std::make_unique<InProcessCoordinator>(options, InProcessCoordinator::Planning::kFromSpec);
    for (int i = 1; i < num_workers; ++i) {
      RegisterRequest request;
      request.mutable_task()->set_type(TASK_TYPE_WORKER);
      request.mutable_task()->set_index(i);
      request.set_incarnation(1);
      ASSERT_TRUE(coordinator_->coordinator().Register(request).ok());
    }
    for (int i = 0; i < num_ps_; ++i) {
      RegisterRequest request;
      request.mutable_task()->set_type(TASK_TYPE_PS);
      request.mutable_task()->set_index(i);
      request.set_incarnation(1);
      request.set_address(shards_[i]->address());
      ASSERT_TRUE(coordinator_->coordinator().Register(request).ok());
    }
    CoordinatorClientOptions client_options;
    client_options.task.set_type(TASK_TYPE_WORKER);
    client_options.task.set_index(0);
    absl::StatusOr<std::unique_ptr<CoordinatorClient>> client =
        CoordinatorClient::Create(calls_.NewChannel(coordinator_->address()), client_options,
                                  MemberSession::NewIncarnation(random_), clock_, random_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    ASSERT_TRUE(client_->member().Register().ok());
  }

  // Submits a job of `spec`; its id.
  std::string Submit(JobSpec spec) {
    SubmitJobRequest submit;
    *submit.mutable_spec() = std::move(spec);
    submit.mutable_spec()->set_name(absl::StrCat("job-", ++jobs_));
    submit.mutable_spec()->mutable_checkpoint()->set_model_dir(
        JoinPath(root_, absl::StrCat("model-", jobs_)));
    absl::StatusOr<SubmitJobResponse> submitted = coordinator_->coordinator().SubmitJob(submit);
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    return submitted.ok() ? submitted->job_id() : "";
  }

  // Starts the coordinator and a job of `spec`; the worker's assignment.
  Assignment StartJob(const JobSpec& spec, int records_per_lease, int num_workers = 1) {
    StartCoordinator(records_per_lease, num_workers);
    job_id_ = Submit(spec);
    if (job_id_.empty()) return Assignment();
    absl::StatusOr<Assignment> assignment = client_->member().GetAssignment("", 0, kWait);
    EXPECT_TRUE(assignment.ok()) << assignment.status();
    if (!assignment.ok()) return Assignment();
    EXPECT_EQ(assignment->job_id(), job_id_);
    return *assignment;
  }

  std::unique_ptr<WorkerLoop> NewLoop(bool overlap = true) {
    return worker::NewLoop(*client_, clock_, random_, metrics_.get(), overlap);
  }

  std::vector<ProgressReport> Reports() const {
    return calls_.Requests<ProgressReport>("ReportProgress");
  }
  std::vector<CompleteDataLeaseRequest> Completions() const {
    return calls_.Requests<CompleteDataLeaseRequest>("CompleteDataLease");
  }
  // The leases the coordinator handed out, end_of_data ones left out.
  std::vector<DataLease> Leases() const {
    std::vector<DataLease> leases;
    for (DataLease& lease : calls_.Responses<DataLease>("AcquireDataLease")) {
      if (!lease.end_of_data()) leases.push_back(std::move(lease));
    }
    return leases;
  }

  // What the worker pushed to shard `s` (every attempt) and how the shard
  // answered.
  std::vector<WirePush> Pushes(int s) const { return shards_[s]->wire().pushes(); }
  // The worker's pushes shard `s` applied.
  int Applied(int s) const {
    int applied = 0;
    for (const WirePush& push : Pushes(s)) {
      applied += push.answer.outcome() == PUSH_OUTCOME_APPLIED ? 1 : 0;
    }
    return applied;
  }

  // Sums of every report the coordinator accepted.
  ProgressReport Totals() const {
    ProgressReport total;
    for (const ProgressReport& r : Reports()) {
      total.set_steps(total.steps() + r.steps());
      total.set_examples(total.examples() + r.examples());
    }
    return total;
  }

  PosixEnv env_;
  std::string root_;
  RealClock clock_;
  SeededRandom random_{9};
  std::vector<std::unique_ptr<WiredShard>> shards_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  CoordinatorCallLog calls_;
  std::unique_ptr<CoordinatorClient> client_;
  prometheus::Registry registry_;
  std::unique_ptr<WorkerMetrics> metrics_;
  int jobs_ = 0;
  std::string job_id_;
  // Parameter servers the coordinator knows (the first of shards_). With
  // one, sync rounds are decided by that shard alone.
  int num_ps_ = 2;
};

// A push of worker/1 to shard 1 of job `job_id`, computed from version
// `base_version`: a step of a row there.
PushRequest OtherWorkersPush(const std::string& job_id, uint64_t sequence, int64_t base_version) {
  PushRequest push;
  push.set_job_id(job_id);
  push.set_base_version(base_version);
  push.mutable_id()->set_worker(1);
  push.mutable_id()->set_incarnation(1);
  push.mutable_id()->set_sequence(sequence);
  push.set_end_of_push(true);
  push.set_examples(8);
  int64_t id = 0;
  while (RowShard(id, 2) != 1) ++id;
  SparseRows& rows = *push.add_gradients()->mutable_rows();
  push.mutable_gradients(0)->set_name("linear/weights");
  rows.set_dtype(DATA_TYPE_FLOAT32);
  rows.set_row_width(1);
  rows.add_ids(id);
  const float value = 0.5f;
  rows.set_values(&value, sizeof(value));
  return push;
}

TEST_F(WorkerLoopTest, RecordsOfAStalePushAreHandedBackWithTheLease) {
  // One lease of 32 records; staleness bounded at one version, two
  // workers of which worker/1 pushes without the coordinator's data.
  JobSpec spec = Spec(UPDATE_MODE_BOUNDED_STALENESS, 2, /*num_examples=*/32);
  spec.mutable_training()->set_staleness_bound(1);
  const Assignment assignment = StartJob(spec, 32, /*num_workers=*/2);
  // Between this worker's second pull and its push, worker/1's two pushes
  // land on shard 1: the second push is two versions behind there.
  shards_[1]->wire().BeforePush(2, [this] {
    for (uint64_t sequence = 1; sequence <= 2; ++sequence) {
      const PushResult result = shards_[1]->PushFromElsewhere(
          OtherWorkersPush(job_id_, sequence, shards_[1]->Version(job_id_)));
      EXPECT_EQ(result.outcome(), PUSH_OUTCOME_APPLIED) << result.ShortDebugString();
    }
  });
  // Pulls wait for pushes, so what each push was computed from is fixed.
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  EXPECT_EQ(completions[0].job_id(), job_id_);
  ASSERT_EQ(completions[0].returned_size(), 1);
  // The second batch of 8 records, which the next lease trains again.
  EXPECT_EQ(completions[0].returned(0).begin(), 8);
  EXPECT_EQ(completions[0].returned(0).end(), 16);
  EXPECT_EQ(leases[1].range().begin(), 8);
  EXPECT_EQ(leases[1].range().end(), 16);
  EXPECT_EQ(completions[1].lease_id(), leases[1].lease_id());
  EXPECT_EQ(completions[1].returned_size(), 0);

  // Five steps ran and were reported; the stale one is not an update.
  const ProgressReport total = Totals();
  EXPECT_EQ(total.steps(), 5);
  EXPECT_EQ(total.examples(), 40);
  // The global step it saw is the most updates a shard applied, worker/1's
  // pushes included: shard 1's 4 of this worker's and 2 of worker/1's.
  EXPECT_EQ(Reports().back().parameter_version(), 6);
  EXPECT_EQ(shards_[1]->Version(job_id_), 6);
  EXPECT_EQ(Applied(0), 5);
  EXPECT_EQ(Applied(1), 4);
  EXPECT_EQ(Pushes(1)[1].answer.outcome(), PUSH_OUTCOME_STALE);
  for (const WirePush& push : Pushes(0)) EXPECT_EQ(push.examples, 8);
}

TEST_F(WorkerLoopTest, EveryPushNamesTheLeaseRecordsItsGradientsCameFrom) {
  // Two epochs of 16 records, a lease each.
  const Assignment assignment =
      StartJob(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/16, /*epochs=*/2), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  // Batches of 8: records [0, 8) and [8, 16) of the first lease (epoch 0),
  // then of the second (epoch 1), in order.
  const std::vector<WirePush> pushes = Pushes(0);
  ASSERT_EQ(pushes.size(), 4u);
  for (size_t i = 0; i < pushes.size(); ++i) {
    ASSERT_TRUE(pushes[i].origin.has_value()) << "push " << i;
    const PushOrigin& origin = *pushes[i].origin;
    EXPECT_EQ(origin.lease_id(), leases[i / 2].lease_id());
    EXPECT_EQ(origin.epoch(), i < 2 ? 0 : 1);
    EXPECT_EQ(origin.records().begin(), static_cast<int64_t>(8 * (i % 2)));
    EXPECT_EQ(origin.records().end(), static_cast<int64_t>(8 * (i % 2) + 8));
  }
}

TEST_F(WorkerLoopTest, ReportsProgressEveryStepsPerLoopSteps) {
  // Two leases of 24 records.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/48), 24);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  std::vector<ProgressReport> reports = Reports();
  // Three of two steps each, then an empty one after the data ran out,
  // which hears the stop.
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports.back().steps(), 0);
  EXPECT_TRUE(calls_.Responses<ProgressResponse>("ReportProgress").back().stop());
  reports.pop_back();
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].steps(), 2);
    EXPECT_EQ(reports[i].examples(), 16);
    // The shards' answer to the push just before the report.
    EXPECT_EQ(reports[i].parameter_version(), static_cast<int64_t>(2 * (i + 1)));
    EXPECT_GT(reports[i].seconds(), 0);
    EXPECT_TRUE(std::isfinite(reports[i].loss()));
    EXPECT_EQ(reports[i].job_id(), job_id_);
  }
  ASSERT_EQ(Completions().size(), 2u);
  EXPECT_EQ(Completions()[1].returned_size(), 0);
  // The shard holding the bias applied every step.
  EXPECT_EQ(Applied(0), 6);
}

TEST_F(WorkerLoopTest, StopsWhenTheShardsAppliedMaxStepsAndHandsBackTheRest) {
  // Leases of a whole epoch; the job stops at global step 2, which the
  // shards' answer to the second push says, before the first report.
  JobSpec spec = Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64, /*epochs=*/2);
  spec.mutable_stop()->set_max_steps(2);
  const Assignment assignment = StartJob(spec, 64);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  EXPECT_EQ(Reports().size(), 1u);
  EXPECT_EQ(Leases().size(), 1u);  // the second epoch's lease was never taken
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 1u);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 16);
  EXPECT_EQ(completions[0].returned(0).end(), 64);
  EXPECT_EQ(Applied(0), 2);
}

// The spec's click logs written as TFRecord under `dir` and read streamed,
// in blocks of 4 records and windows of 2 blocks.
SyntheticClicksSource FilledClicks(SyntheticClicksSource clicks) {
  FillSyntheticClicksDefaults(&clicks);
  return clicks;
}

JobSpec StreamedSpec(JobSpec spec, const std::string& dir) {
  PosixEnv env;
  absl::StatusOr<std::unique_ptr<SyntheticClicks>> clicks =
      SyntheticClicks::Create(FilledClicks(spec.train_data().synthetic_clicks()),
                              /*test_split=*/false);
  EXPECT_TRUE(clicks.ok()) << clicks.status();
  const std::string path = JoinPath(dir, "clicks.tfrecord");
  EXPECT_TRUE(WriteTfRecordFile(env, path, **clicks).ok());
  DataSpec& data = *spec.mutable_train_data();
  TfRecordSource& tfrecord = *data.mutable_tfrecord();
  tfrecord.add_paths(path);
  tfrecord.add_sparse_features("field_0");
  tfrecord.add_sparse_features("field_1");
  tfrecord.set_label("label");
  data.set_read_mode(DataSpec::READ_MODE_STREAMED);
  data.set_stream_block_records(4);
  data.set_shuffle_window_blocks(2);
  return spec;
}

TEST_F(WorkerLoopTest, OnStreamedDataTheNextLeaseIsTakenAheadAndEveryRecordTrainedOnce) {
  // Four leases of 16 records, each taken while the one before trains.
  const Assignment assignment =
      StartJob(StreamedSpec(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64), root_), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 4u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 4u);
  std::vector<int> trained(64, 0);
  for (const WirePush& push : Pushes(0)) {
    ASSERT_TRUE(push.origin.has_value());
    for (int64_t r = push.origin->records().begin(); r < push.origin->records().end(); ++r) {
      ++trained[r];
    }
  }
  EXPECT_THAT(trained, ::testing::Each(1));
  for (size_t i = 0; i < completions.size(); ++i) {
    EXPECT_EQ(completions[i].lease_id(), leases[i].lease_id());
    EXPECT_EQ(completions[i].returned_size(), 0);
  }
}

TEST_F(WorkerLoopTest, OnStreamedDataTheLeaseTakenAheadIsHandedBackWholeAtTheStop) {
  // Leases of 32; the job stops at global step 2, the first report, after
  // the second lease was taken ahead.
  JobSpec spec = StreamedSpec(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64), root_);
  spec.mutable_stop()->set_max_steps(2);
  const Assignment assignment = StartJob(spec, 32);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 2u);
  // The lease in hand: its last two batches back.
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 16);
  EXPECT_EQ(completions[0].returned(0).end(), 32);
  // The lease ahead, untouched: all of it back.
  EXPECT_EQ(completions[1].lease_id(), leases[1].lease_id());
  ASSERT_EQ(completions[1].returned_size(), 1);
  EXPECT_EQ(completions[1].returned(0).begin(), leases[1].range().begin());
  EXPECT_EQ(completions[1].returned(0).end(), leases[1].range().end());
  EXPECT_EQ(Applied(0), 2);
}

// What a job's first update did on each shard: the values the shard holds
// of "linear/bias" (shard 0 only) and of its rows of "linear/weights",
// before and after.
struct FirstUpdate {
  std::vector<std::vector<float>> before, after;

  // The update's L2 norm on shard `s`, or over both shards when -1.
  double Norm(int s = -1) const {
    double sum = 0;
    for (int shard = 0; shard < 2; ++shard) {
      if (s >= 0 && shard != s) continue;
      for (size_t i = 0; i < before[shard].size(); ++i) {
        const double d = after[shard][i] - before[shard][i];
        sum += d * d;
      }
    }
    return std::sqrt(sum);
  }
};

class WorkerClippingTest : public WorkerLoopTest {
 protected:
  // Trains two steps (batches of 8) of a job with plain SGD at learning
  // rate 1, clipped at `clip_norm`, with every push applied before the next
  // pull. Each shard's values are read as its first push and its second
  // arrive, so the difference is the first update: minus the gradient as
  // the worker clipped it.
  FirstUpdate TrainFirstUpdate(float clip_norm) {
    EndPreviousJob();
    JobSpec spec = Spec(UPDATE_MODE_ASYNC, 1, /*num_examples=*/16);
    spec.mutable_optimizer()->mutable_sgd();
    spec.mutable_optimizer()->set_learning_rate(1.0f);
    spec.mutable_optimizer()->set_clip_norm(clip_norm);
    const Assignment assignment = StartJob(spec, 16);
    FirstUpdate update;
    update.before.resize(2);
    update.after.resize(2);
    for (int s = 0; s < 2; ++s) {
      // Run on a gRPC thread; the worker waits for their pushes meanwhile.
      shards_[s]->wire().BeforePush(1, [this, s, &update] { update.before[s] = Values(s); });
      shards_[s]->wire().BeforePush(2, [this, s, &update] { update.after[s] = Values(s); });
    }
    std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
    EXPECT_TRUE(loop->RunAssignment(assignment).ok());
    for (int s = 0; s < 2; ++s) {
      // Every batch has rows on both shards.
      EXPECT_FALSE(update.before[s].empty()) << "no first push reached shard " << s;
      EXPECT_FALSE(update.after[s].empty()) << "no second push reached shard " << s;
      if (update.after[s].size() != update.before[s].size()) update.after[s] = update.before[s];
    }
    return update;
  }

 private:
  // The coordinator of the previous job goes, and its job with it: a shard
  // sets one job up at a time.
  void EndPreviousJob() {
    if (job_id_.empty()) return;
    client_.reset();
    coordinator_.reset();
    DropJobRequest drop;
    drop.set_job_id(job_id_);
    for (auto& shard : shards_) shard->store().DropJob(drop).IgnoreError();
  }

  // Shard `s`'s values of the job.
  std::vector<float> Values(int s) {
    std::vector<float> values;
    if (s == 0) values = shards_[0]->Dense(job_id_, "linear/bias");
    for (int64_t id = 0; id < 20; ++id) {
      if (RowShard(id, 2) != s) continue;
      const std::vector<float> row = shards_[s]->Row(job_id_, "linear/weights", id);
      values.insert(values.end(), row.begin(), row.end());
    }
    return values;
  }
};

// The worker clips its whole gradient, the bias on shard 0 and the rows on
// both shards, by its one global norm before the pushes.
TEST_F(WorkerClippingTest, ClipsTheWholeGradientByItsGlobalNormBeforeThePushes) {
  constexpr float kClipNorm = 1e-3f;
  const FirstUpdate clipped = TrainFirstUpdate(kClipNorm);
  EXPECT_NEAR(clipped.Norm(), kClipNorm, kClipNorm * 1e-3);
  // Each shard's part is only a share of it: a shard clipping its slice
  // by the slice's own norm would have left each at the clip norm.
  for (int s = 0; s < 2; ++s) {
    EXPECT_GT(clipped.Norm(s), 0) << s;
    EXPECT_LT(clipped.Norm(s), 0.99 * kClipNorm) << s;
  }
}

// clip_norm 0 is no clipping; a gradient under clip_norm is pushed as
// computed, and one over it scaled to it.
TEST_F(WorkerClippingTest, ScalesOnlyAGradientAboveTheClipNorm) {
  const FirstUpdate off = TrainFirstUpdate(0);
  const double norm = off.Norm();
  ASSERT_GT(norm, 0);
  const FirstUpdate under = TrainFirstUpdate(static_cast<float>(norm * 1.01));
  EXPECT_EQ(under.after, off.after);
  const FirstUpdate over = TrainFirstUpdate(static_cast<float>(norm / 2));
  EXPECT_NEAR(over.Norm(), norm / 2, norm * 1e-4);
  for (int s = 0; s < 2; ++s) {
    ASSERT_EQ(over.before[s], off.before[s]);
    for (size_t i = 0; i < off.before[s].size(); ++i) {
      const float full = off.after[s][i] - off.before[s][i];
      EXPECT_NEAR(over.after[s][i] - over.before[s][i], full / 2, 1e-6) << s << " " << i;
    }
  }
}

TEST_F(WorkerLoopTest, WorkerWithoutDataReportsUntilItHearsTheStop) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 100, /*num_examples=*/16), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  std::vector<ProgressReport> reports = Reports();
  ASSERT_FALSE(reports.empty());
  // Its two steps are reported once the data ran out, and the answer said
  // stop.
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_EQ(reports.back().job_id(), job_id_);
  EXPECT_TRUE(calls_.Responses<ProgressResponse>("ReportProgress").back().stop());
}

TEST_F(WorkerLoopTest, StopsWhenHeartbeatsNameAnotherJob) {
  // One lease of 12,500 batches and no report before it ends: only
  // heartbeats can tell the worker its job changed.
  constexpr int kRecords = 100000;
  JobSpec spec = Spec(UPDATE_MODE_ASYNC, 1000000, kRecords);
  const Assignment assignment = StartJob(spec, kRecords);
  // The shards cannot drop the job: they go on taking its pushes (and the
  // next job cannot start on them), so they do not tell the worker either.
  for (auto& shard : shards_) {
    shard->wire().RefuseCalls("DropJob", absl::InternalError("the shard cannot drop jobs"));
  }
  client_->member().StartHeartbeats();
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->RunAssignment(assignment); });
  ASSERT_TRUE(calls_.WaitForCalls("AcquireDataLease", 1, kWait));
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  stop.set_immediately(true);
  ASSERT_TRUE(coordinator_->coordinator().StopJob(stop).ok());
  EXPECT_FALSE(Submit(Spec(UPDATE_MODE_ASYNC, 1)).empty());
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_LT(Applied(0), kRecords / 8);
  // The heartbeats named the next job, or none between the two.
  bool heard_other = false;
  for (const HeartbeatResponse& beat : calls_.Responses<HeartbeatResponse>("Heartbeat")) {
    heard_other = heard_other || beat.job_id() != job_id_;
  }
  EXPECT_TRUE(heard_other);
}

TEST_F(WorkerLoopTest, SyncModeWaitsForEachRoundBeforeTheNextPull) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/24), 24);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // On two shards the rounds are agreed: each shard stages the one
  // worker's push, the worker joins the round, and the coordinator commits
  // it on both; the next pull waits for that, so the pushes name
  // consecutive versions.
  for (int s = 0; s < 2; ++s) {
    std::vector<WirePush> pushes = Pushes(s);
    ASSERT_EQ(pushes.size(), 3u) << "ps/" << s;
    for (size_t i = 0; i < pushes.size(); ++i) {
      EXPECT_EQ(pushes[i].base_version, i);
      EXPECT_EQ(pushes[i].answer.outcome(), PUSH_OUTCOME_AGGREGATED);
    }
    EXPECT_EQ(shards_[s]->Version(job_id_), 3) << "ps/" << s;
  }
}

TEST_F(WorkerLoopTest, SyncWorkerKeepsItsSlotsLeaseWhenTrainingFails) {
  // One worker in deterministic sync mode: its slot's lease covers rounds
  // 0 to 7.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64);
  // The second push is refused: this run ends with the error.
  for (auto& shard : shards_) {
    shard->wire().RefusePush(2, absl::InvalidArgumentError("refused for the test"));
  }
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  const absl::Status result = loop->RunAssignment(assignment);
  EXPECT_THAT(result.message(), ::testing::HasSubstr("refused for the test"));
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].first_round(), 0);
  // Its rounds need exactly this data, so the lease is not completed (with
  // its records handed back to whoever asks): the next run takes it up.
  EXPECT_THAT(Completions(), ::testing::IsEmpty());
}

TEST_F(WorkerLoopTest, OnOneShardASyncPushIsOverlappedWithThePullOfItsRound) {
  num_ps_ = 1;
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/24), 24);
  // The shard decides the rounds: the one worker's push closes each, and
  // the next batch's pull, sent behind it, waits there for that round.
  // Answers come late, so that a pull sent only once the push's answer was
  // read could not pass it on the wire.
  shards_[0]->wire().DelayAnswers(absl::Milliseconds(400));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  std::vector<WirePush> pushes = Pushes(0);
  ASSERT_EQ(pushes.size(), 3u);
  for (size_t i = 0; i < pushes.size(); ++i) {
    EXPECT_EQ(pushes[i].base_version, i);
    EXPECT_EQ(pushes[i].answer.outcome(), PUSH_OUTCOME_APPLIED);
    // The last push has no next batch: the lease's end waits for it.
    EXPECT_EQ(pushes[i].round_pulled_before_answer, i + 1 < pushes.size()) << "push " << i;
  }
  EXPECT_EQ(shards_[0]->Version(job_id_), 3);
  EXPECT_EQ(Totals().steps(), 3);
  ASSERT_EQ(Completions().size(), 1u);
  EXPECT_THAT(Completions()[0].returned(), ::testing::IsEmpty());
}

TEST_F(WorkerLoopTest, OnOneShardAPullWaitingForTheRoundOfARefusedPushEndsWithTheRefusal) {
  num_ps_ = 1;
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64);
  // The second push never reaches the shard, so its round never ends: the
  // pull sent behind it outwaits the round, and the push's refusal ends
  // the run instead of a wait for good.
  shards_[0]->wire().RefusePush(2, absl::InvalidArgumentError("refused for the test"));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  const absl::Status result = loop->RunAssignment(assignment);
  EXPECT_THAT(result.message(), ::testing::HasSubstr("refused for the test"));
  EXPECT_EQ(shards_[0]->Version(job_id_), 1);
  EXPECT_EQ(Applied(0), 1);
}

TEST_F(WorkerLoopTest, APushOfALeaseTheCoordinatorSealedEndsTheRunAsALostWorkers) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 100, /*num_examples=*/32), 32);
  // Before the second push reaches shard 0, the coordinator hands the
  // lease back (as for a worker it marked lost): it seals it there.
  shards_[0]->wire().BeforePush(2, [this] {
    ReadPushLedgerRequest seal;
    seal.set_job_id(job_id_);
    seal.add_lease_ids(Leases().at(0).lease_id());
    seal.set_seal(true);
    EXPECT_TRUE(shards_[0]->store().ReadPushLedger(seal).ok());
  });
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  const absl::Status result = loop->RunAssignment(assignment);
  EXPECT_TRUE(absl::IsAborted(result)) << result;
  EXPECT_EQ(ReasonOf(result), ERROR_REASON_MEMBERSHIP_LAPSED) << result;
  EXPECT_THAT(result.message(), ::testing::HasSubstr("marked lost"));
  const std::vector<WirePush> pushes = Pushes(0);
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_EQ(pushes[1].answer.outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(pushes[1].answer.status().reason(), ERROR_REASON_LEASE_SEALED);
  // It trained nothing more after the refusal.
  EXPECT_EQ(Applied(0), 1);
}

TEST_F(WorkerLoopTest, APushToShardsThatDroppedTheJobEndsTheRunWithTheirReason) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 100, /*num_examples=*/32), 32);
  shards_[0]->wire().BeforePush(2, [this] {
    DropJobRequest drop;
    drop.set_job_id(job_id_);
    EXPECT_TRUE(shards_[0]->store().DropJob(drop).ok());
  });
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  const absl::Status result = loop->RunAssignment(assignment);
  // Not a failure of this worker: the run is over, and the member loop
  // takes the job's current assignment up.
  EXPECT_EQ(ReasonOf(result), ERROR_REASON_JOB_ENDED) << result;
  EXPECT_TRUE(EndsRun(result));
  EXPECT_THAT(result.message(), ::testing::HasSubstr("the parameter servers ended this run"));
}

TEST_F(WorkerLoopTest, SyncWorkerWaitingForARoundHearsTheStop) {
  // Every push joins a round that never completes: the other worker has
  // stopped.
  const Assignment assignment =
      StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64, /*num_workers=*/2);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->RunAssignment(assignment); });
  // While it waits, it asks whether the job still runs.
  ASSERT_TRUE(calls_.WaitForCalls("ReportProgress", 1, kWait));
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  ASSERT_TRUE(coordinator_->coordinator().StopJob(stop).ok());
  runner.join();
  ASSERT_TRUE(result.ok()) << result;
  EXPECT_EQ(Totals().steps(), 1);
  // On two shards the round is agreed: the first batch's push is staged on
  // both and never committed, so the whole lease goes back.
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 1u);
  int64_t returned = 0;
  for (const RecordRange& range : completions[0].returned()) {
    returned += range.end() - range.begin();
  }
  EXPECT_EQ(returned, 64);
  for (int s = 0; s < 2; ++s) {
    ASSERT_FALSE(Pushes(s).empty());
    EXPECT_EQ(Pushes(s)[0].answer.outcome(), PUSH_OUTCOME_AGGREGATED);
    EXPECT_EQ(shards_[s]->Version(job_id_), 0);
  }
}

TEST_F(WorkerLoopTest, RunServesAssignmentsUntilTheClusterShutsDown) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(16));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  job_id_ = Submit(Spec(UPDATE_MODE_ASYNC, 1, /*num_examples=*/16));
  ASSERT_TRUE(calls_.WaitForCalls("CompleteDataLease", 1, kWait));
  ShutdownRequest shutdown;
  shutdown.set_stop_running_job(true);
  ASSERT_TRUE(coordinator_->coordinator().Shutdown(shutdown).ok());
  // The coordinator answers the worker's long polls for an assignment at
  // deadlines of its clock: from now on they pass at once.
  coordinator_->clock().JumpToDeadlines();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(loop->shutdown_requested());
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_GT(calls_.Count("Heartbeat"), 0u);
}

TEST_F(WorkerLoopTest, StopEndsRunWhileIdle) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(16));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  // Run() registers once more before it waits for an assignment.
  ASSERT_TRUE(calls_.WaitForCalls("Register", 2, kWait));
  loop->Stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_FALSE(loop->shutdown_requested());
}

// A sync worker's run ends with an error mid-lease, and the next run of
// its slot (this process taking the assignment up again, or a new one in
// a lost worker's place) takes the slot's lease up: rounds the shards have
// completed are not trained again.
void RefuseOnEveryShard(std::vector<std::unique_ptr<WiredShard>>& shards, uint64_t sequence) {
  for (auto& shard : shards) {
    shard->wire().RefusePush(sequence, absl::InvalidArgumentError("refused for the test"));
  }
}

TEST_F(WorkerLoopTest, SyncWorkerTakingALeaseUpSkipsTheBatchesOfCompletedRounds) {
  // One lease of 64 records: 8 batches, for rounds 0 to 7.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64);
  // The first run's third push is refused: rounds 0 and 1 are complete.
  RefuseOnEveryShard(shards_, 3);
  EXPECT_FALSE(NewLoop()->RunAssignment(assignment).ok());
  ASSERT_THAT(Completions(), ::testing::IsEmpty());
  for (auto& shard : shards_) shard->wire().ClearFaults();
  const size_t first_run = Pushes(1).size();

  ASSERT_TRUE(NewLoop()->RunAssignment(assignment).ok());
  // The same lease, still from round 0.
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[1].lease_id(), leases[0].lease_id());
  EXPECT_EQ(leases[1].first_round(), 0);
  // Batches 2..7, for rounds 2..7.
  std::vector<WirePush> pushes = Pushes(1);
  pushes.erase(pushes.begin(), pushes.begin() + first_run);
  ASSERT_EQ(pushes.size(), 6u);
  // Each staged on both shards (agreed rounds) and committed.
  for (size_t i = 0; i < pushes.size(); ++i) {
    EXPECT_EQ(pushes[i].base_version, 2 + i);
    EXPECT_EQ(pushes[i].answer.outcome(), PUSH_OUTCOME_AGGREGATED);
  }
  EXPECT_EQ(shards_[1]->Version(job_id_), 8);
  // The whole lease is done: nothing handed back.
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  EXPECT_EQ(completions[0].returned_size(), 0);
}

TEST_F(WorkerLoopTest, SyncWorkerPushesARoundItNeverJoinedAgainInItsNextRun) {
  // Two leases of 16 records: rounds 0 and 1, then 2 and 3.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/32), 16);
  // The first run's push for round 1 is staged on both shards, but the
  // worker never hears so: the answers are lost and the retries refused. On
  // two shards the rounds are agreed, so round 1, never joined, is not
  // committed (one shard alone would have completed it).
  for (auto& shard : shards_) {
    FaultyWire& wire = shard->wire();
    wire.DropAnswerOf(2);
    wire.BeforePush(
        2, [&wire] { wire.RefusePush(2, absl::InvalidArgumentError("refused for the test")); });
  }
  EXPECT_FALSE(NewLoop()->RunAssignment(assignment).ok());
  ASSERT_THAT(Completions(), ::testing::IsEmpty());
  for (int s = 0; s < 2; ++s) EXPECT_EQ(shards_[s]->Version(job_id_), 1) << "ps/" << s;
  for (auto& shard : shards_) shard->wire().ClearFaults();
  const size_t first_run = Pushes(1).size();

  ASSERT_TRUE(NewLoop()->RunAssignment(assignment).ok());
  // The next run takes the lease up at round 1, pushes its batch again
  // (its newer incarnation replaces the staged push), joins, and trains
  // rounds 2 and 3 from the second lease.
  std::vector<WirePush> pushes = Pushes(1);
  pushes.erase(pushes.begin(), pushes.begin() + first_run);
  ASSERT_EQ(pushes.size(), 3u);
  for (size_t i = 0; i < pushes.size(); ++i) EXPECT_EQ(pushes[i].base_version, 1 + i);
  for (int s = 0; s < 2; ++s) EXPECT_EQ(shards_[s]->Version(job_id_), 4) << "ps/" << s;
  const std::vector<DataLease> leases = Leases();
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  EXPECT_EQ(completions[0].returned_size(), 0);
  EXPECT_NE(completions[1].lease_id(), leases[0].lease_id());
  EXPECT_EQ(completions[1].returned_size(), 0);
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
