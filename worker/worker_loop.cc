#include "worker/worker_loop.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/sync_rounds.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/job_model.h"
#include "common/model/model.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "worker/internal/lease_feeder.h"
#include "worker/internal/progress_reporter.h"
#include "worker/internal/step_runner.h"
#include "worker/push_incarnation.h"
#include "worker/shard_slicer.h"
#include "worker/training_data.h"

namespace pstrain {
namespace worker {

using internal::FedLease;
using internal::LeaseFeeder;
using internal::ProgressReporter;
using internal::StepRunner;

// Everything one assignment needs, built on the compute thread and thrown
// away when the job ends for this worker: the model and the data, the
// parameter-server client, and the three parts that train with them (the
// lease feeder, the step runner and the progress reporter).
class WorkerLoop::AssignmentRun {
 public:
  AssignmentRun(WorkerLoop& loop, const Assignment& assignment)
      : loop_(loop),
        assignment_(assignment),
        job_id_(assignment.job_id()),
        spec_(assignment.spec()),
        answers_before_(loop.coordinator_.member().last_heartbeat().answers),
        reregistrations_before_(loop.coordinator_.member().reregistrations()) {}

  ~AssignmentRun() {
    absl::MutexLock l(&loop_.mu_);
    loop_.ps_ = nullptr;
  }

  absl::Status Setup();
  absl::Status Train();

 private:
  // The parameter-server client's settings for this run.
  ParameterServerClientOptions PsOptions() const;
  // Builds the feeder, the reporter and the step runner over what Setup
  // made.
  void BuildParts(const ParameterServerClientOptions& ps);
  // Trains `fed` and hands it back (or keeps it for its sync slot).
  absl::Status TrainFed(FedLease fed);
  // What a lease whose training ended with `trained` means for the run:
  // OK to go on, or the status that ends it.
  absl::Status RunStatusAfter(const absl::Status& trained);

  bool Over() { return loop_.JobOver(job_id_, answers_before_) || MembershipLapsed(); }
  // Reports what was applied and returns the status (Aborted
  // MEMBERSHIP_LAPSED) of a worker that was marked lost (it registers again
  // and takes the job up anew).
  absl::Status LostMembership();
  // This process registered again since the run began (it was marked lost,
  // e.g. frozen past its heartbeat deadline): its leases went to others,
  // so nothing more of this run may reach the shards.
  bool MembershipLapsed() const {
    return loop_.coordinator_.member().reregistrations() != reregistrations_before_;
  }

  WorkerLoop& loop_;
  const Assignment& assignment_;
  const std::string job_id_;
  const JobSpec& spec_;
  const int64_t answers_before_;
  const int64_t reregistrations_before_;

  std::unique_ptr<ComputeContext> compute_;
  std::unique_ptr<ExampleSource> source_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ParameterServerClient> ps_;
  std::unique_ptr<EpochOrders> orders_;
  // Borrow the above, so declared after them; the step runner borrows the
  // other two.
  std::unique_ptr<ProgressReporter> reporter_;
  std::unique_ptr<LeaseFeeder> feeder_;
  std::unique_ptr<StepRunner> steps_;
};

absl::Status WorkerLoop::AssignmentRun::Setup() {
  if (!JobModeTrains(spec_.mode())) {
    return absl::OkStatus();  // nothing to train; Train() sees no model
  }
  if (!spec_.has_train_data()) {
    return absl::InvalidArgumentError(absl::StrCat("job ", job_id_, " has no train_data"));
  }
  ASSIGN_OR_RETURN(source_, OpenTrainingData(spec_.train_data()));
  ASSIGN_OR_RETURN(JobModel model, CreateJobModel(spec_, source_->info()));
  compute_ = std::move(model.compute);
  model_ = std::move(model.model);
  ASSIGN_OR_RETURN(ShardSlicer slicer,
                   ShardSlicer::Create(model_->Variables(), assignment_.placements(),
                                       assignment_.ps_addresses_size()));
  const ParameterServerClientOptions ps = PsOptions();
  std::vector<std::string> addresses(assignment_.ps_addresses().begin(),
                                     assignment_.ps_addresses().end());
  ASSIGN_OR_RETURN(ps_, ParameterServerClient::Create(std::move(addresses), std::move(slicer), ps,
                                                      loop_.clock_, loop_.random_, loop_.metrics_,
                                                      loop_.options_.ps_channels));
  {
    absl::MutexLock l(&loop_.mu_);
    loop_.ps_ = ps_.get();
    loop_.run_job_id_ = job_id_;
    loop_.run_answers_before_ = answers_before_;
    loop_.run_replica_epoch_ = assignment_.replica_epoch();
    if (loop_.stop_.stopped()) ps_->Cancel();
  }
  BuildParts(ps);
  LOG(INFO) << "job " << job_id_ << ": training " << model_->name() << " on "
            << source_->info().DebugString() << " as worker rank " << ps.worker << " of "
            << assignment_.num_workers() << ", " << assignment_.ps_addresses_size()
            << " parameter servers, " << UpdateMode_Name(ps.update_mode)
            << (ps.gradient_dtype == DATA_TYPE_BFLOAT16 ? ", gradients pushed as bfloat16" : "")
            << (ps.parameter_dtype == DATA_TYPE_BFLOAT16 ? ", parameters pulled as bfloat16" : "");
  return absl::OkStatus();
}

ParameterServerClientOptions WorkerLoop::AssignmentRun::PsOptions() const {
  ParameterServerClientOptions ps = loop_.options_.ps;
  ps.job_id = job_id_;
  // The shards know workers by rank in [0, num_workers).
  ps.worker = assignment_.num_workers() > 0 ? assignment_.worker_rank()
                                            : loop_.coordinator_.member().task().index();
  // Each run numbers its pushes afresh, above every earlier run: after a
  // rollback the shards hold the dedup state of the checkpoint, in which
  // this worker's earlier sequence numbers are already spent.
  ps.incarnation = NewPushIncarnation(loop_.clock_.Now(), loop_.random_.Next());
  ps.generation = assignment_.generation();
  MemberSession* member = &loop_.coordinator_.member();
  const int64_t registrations = reregistrations_before_;
  ps.membership_deadline = [member, registrations] {
    return member->reregistrations() == registrations ? member->MembershipDeadline()
                                                      : absl::InfinitePast();
  };
  ps.update_mode = UpdateModeOf(spec_.training());
  ps.replicated = assignment_.replica_epoch() > 0;
  ps.gradient_dtype = WireDataTypeOf(spec_.training().wire().gradients());
  ps.parameter_dtype = WireDataTypeOf(spec_.training().wire().parameters());
  return ps;
}

void WorkerLoop::AssignmentRun::BuildParts(const ParameterServerClientOptions& ps) {
  internal::LeaseFeederOptions data;
  data.backoff = loop_.options_.backoff;
  data.lease_ahead_batches = loop_.options_.lease_ahead_batches;
  data.data = TrainingDataOptionsFromSpec(spec_.train_data());
  orders_ = std::make_unique<EpochOrders>(source_.get(), data.data.shuffle, data.data.seed);
  auto over = [this] { return Over(); };
  reporter_ = std::make_unique<ProgressReporter>(loop_.coordinator_, assignment_,
                                                 StepsPerLoopOf(spec_.training()), loop_.clock_,
                                                 loop_.metrics_);
  feeder_ = std::make_unique<LeaseFeeder>(loop_.coordinator_, job_id_, std::move(data), *source_,
                                          *orders_, loop_.waits_, loop_.metrics_, over);
  internal::StepRunnerOptions steps;
  steps.job_id = job_id_;
  steps.sync = ps.update_mode == UPDATE_MODE_SYNC;
  steps.num_shards = assignment_.ps_addresses_size();
  steps.max_steps = spec_.stop().max_steps();
  steps.round_wait = loop_.options_.round_wait;
  steps.log_waits_every = loop_.options_.backoff.log_every;
  steps.overlap_pull_with_push = loop_.options_.overlap_pull_with_push;
  steps.clip_norm = spec_.optimizer().clip_norm();
  internal::RoundJoiner join_round;
  if (RoundsAreAgreed(spec_.training(), steps.num_shards)) {
    join_round = [this](int64_t round, const PushSummary& push) {
      return loop_.coordinator_.JoinRound(job_id_, assignment_.generation(), round,
                                          push.incarnation, push.sequence,
                                          loop_.options_.round_wait);
    };
  }
  steps_ = std::make_unique<StepRunner>(std::move(steps), *model_, *ps_, *reporter_, *feeder_,
                                        loop_.clock_, loop_.metrics_, over, std::move(join_round));
}

absl::Status WorkerLoop::AssignmentRun::Train() {
  if (model_ == nullptr) {
    LOG(INFO) << "job " << job_id_ << " trains nothing (" << JobMode_Name(spec_.mode()) << ")";
    return absl::OkStatus();
  }
  while (!reporter_->training_over() && !steps_->reached_max_steps() && !Over()) {
    ASSIGN_OR_RETURN(std::optional<FedLease> fed, feeder_->Next());
    if (!fed.has_value()) break;
    RETURN_IF_ERROR(TrainFed(*std::move(fed)));
  }
  feeder_->ReturnAhead(MembershipLapsed());
  if (MembershipLapsed()) return LostMembership();
  // The coordinator takes its final checkpoint once every worker has heard
  // the stop: report (empty reports when nothing is left) until it says so
  // or the job is over some other way.
  RepeatEvery(
      loop_.waits_, [this] { return loop_.options_.done_report_interval; },
      [this] {
        if (reporter_->training_over() || Over()) return false;
        reporter_->Report();
        return !reporter_->training_over();
      });
  return absl::OkStatus();
}

absl::Status WorkerLoop::AssignmentRun::TrainFed(FedLease fed) {
  absl::Status trained;
  if (fed.reader == nullptr) {
    absl::StatusOr<std::unique_ptr<LeaseBatchReader>> reader = feeder_->OpenReader(fed.lease);
    if (reader.ok()) fed.reader = *std::move(reader);
    trained = reader.status();
  }
  std::vector<RecordRange> returned;
  if (trained.ok()) trained = steps_->TrainLease(fed.lease, *fed.reader, &returned);
  fed.reader.reset();  // stops reading before the lease goes back
  if (fed.lease.has_first_round() && !trained.ok() && !reporter_->training_over()) {
    feeder_->KeepForSlot(fed.lease, trained, std::move(returned));
  } else {
    feeder_->Complete(fed.lease, trained, std::move(returned));
  }
  if (!trained.ok()) feeder_->ReturnAhead(MembershipLapsed());
  return RunStatusAfter(trained);
}

absl::Status WorkerLoop::AssignmentRun::RunStatusAfter(const absl::Status& trained) {
  if (!EndsRun(trained)) return trained;
  // A shard refused a push whose data may be someone else's now: made
  // after this worker's membership may have lapsed (a process frozen past
  // its heartbeat deadline), or of a lease the coordinator handed back.
  // The coordinator marks it lost and hands its data to others.
  if (DataHandedOver(trained) || MembershipLapsed()) return LostMembership();
  // The shards dropped the job (it ended while this worker trained), a
  // newer run of it replaced this one (a rollback), or a newer incarnation
  // pushed: this run is over and the job's current assignment says what
  // comes next.
  return WithPrefix(trained,
                    absl::StrCat("the parameter servers ended this run of job ", job_id_, ": "));
}

absl::Status WorkerLoop::AssignmentRun::LostMembership() {
  // What it pushed before it was lost was applied: count it.
  reporter_->Report();
  return WithReason(
      absl::AbortedError(absl::StrCat("worker was marked lost during job ", job_id_,
                                      " (no heartbeat in time); its data went to others")),
      ERROR_REASON_MEMBERSHIP_LAPSED);
}

WorkerLoop::WorkerLoop(CoordinatorClient& coordinator, WorkerLoopOptions options, Clock& clock,
                       RandomSource& random, WorkerMetrics* metrics)
    : coordinator_(coordinator),
      options_(std::move(options)),
      clock_(clock),
      random_(random),
      metrics_(metrics) {}

void WorkerLoop::Stop() {
  absl::MutexLock l(&mu_);
  stop_.Stop();
  coordinator_.member().Cancel();
  if (ps_ != nullptr) ps_->Cancel();
}

bool WorkerLoop::shutdown_requested() const {
  absl::MutexLock l(&mu_);
  return shutdown_requested_;
}

bool WorkerLoop::JobOver(const std::string& job_id, int64_t answers_before) {
  if (stop_.stopped()) return true;
  const HeartbeatView heartbeat = coordinator_.member().last_heartbeat();
  if (heartbeat.shutdown) {
    absl::MutexLock l(&mu_);
    shutdown_requested_ = true;
    return true;
  }
  // One heartbeat may have been in flight when the job was assigned, its
  // answer older than the assignment: only the answers after it count.
  return heartbeat.answers > answers_before + 1 && heartbeat.job_id != job_id;
}

absl::Status WorkerLoop::RunAssignment(const Assignment& assignment) {
  AssignmentRun run(*this, assignment);
  RETURN_IF_ERROR(run.Setup());
  return run.Train();
}

void WorkerLoop::FollowShards(const HeartbeatView& heard) {
  absl::MutexLock l(&mu_);
  if (ps_ == nullptr) return;
  if (heard.job_id != run_job_id_ && heard.answers > run_answers_before_ + 1) {
    // The job is over for this worker: calls retried at shards that no
    // longer hold it (with replicas JOB_ENDED is retried) end now.
    ps_->Cancel();
    return;
  }
  if (heard.job_id != run_job_id_ || heard.replica_epoch <= run_replica_epoch_ ||
      heard.ps_addresses.size() != static_cast<size_t>(ps_->slicer().num_shards())) {
    return;
  }
  for (int shard = 0; shard < static_cast<int>(heard.ps_addresses.size()); ++shard) {
    ps_->Redirect(shard, heard.ps_addresses[shard]);
  }
  run_replica_epoch_ = heard.replica_epoch;
}

class WorkerLoop::Role : public MemberRole {
 public:
  explicit Role(WorkerLoop& loop) : loop_(loop) {}

  absl::Status RunAssignment(const Assignment& assignment) override {
    loop_.coordinator_.SetJob(assignment.job_id());
    if (loop_.metrics_ != nullptr) loop_.metrics_->SetBusy(true);
    absl::Status trained = loop_.RunAssignment(assignment);
    if (loop_.metrics_ != nullptr) loop_.metrics_->SetBusy(false);
    loop_.coordinator_.SetJob("");
    return trained;
  }
  void DescribeSelf(HeartbeatRequest* beat) override { loop_.coordinator_.DescribeSelf(beat); }
  void Heard(const HeartbeatView& heard) override { loop_.FollowShards(heard); }
  // The run in hand sees it too (JobOver) and ends after handing its lease
  // back; the member loop then returns.
  void ShutDown() override {
    absl::MutexLock l(&loop_.mu_);
    loop_.shutdown_requested_ = true;
  }

 private:
  WorkerLoop& loop_;
};

absl::Status WorkerLoop::Run() {
  Role role(*this);
  MemberLoopOptions options;
  options.assignment_wait = options_.assignment_wait;
  options.pauses = options_.backoff;
  MemberLoop member(coordinator_.member(), role, options);
  const absl::Status served = member.Run();
  if (member.shutdown_requested()) {
    absl::MutexLock l(&mu_);
    shutdown_requested_ = true;
  }
  return served;
}

}  // namespace worker
}  // namespace pstrain
