#include "bench/cluster/bench_cluster.h"

#include <signal.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/common/job_submission.h"
#include "bench/common/metrics_scrape.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace pstrain {
namespace bench {
namespace {

constexpr absl::Duration kCallTimeout = absl::Seconds(30);
constexpr absl::Duration kScrapeTimeout = absl::Seconds(10);

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& what) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

bool HasEnded(JobState state) {
  return state == JOB_STATE_SUCCEEDED || state == JOB_STATE_FAILED || state == JOB_STATE_STOPPED;
}

// What worker `task` did between scrapes `a` and `b` of its /metrics.
WorkerWindow WorkerWindowBetween(const std::string& task, const MetricsPage& a,
                                 const MetricsPage& b) {
  auto change = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
    return b.Sum(name, labels) - a.Sum(name, labels);
  };
  WorkerWindow worker;
  worker.task = task;
  worker.steps = change("pstrain_worker_steps_total", {});
  worker.examples = change("pstrain_worker_examples_total", {});
  for (const std::string& phase : StepPhases()) {
    worker.phase_seconds[phase] =
        change("pstrain_worker_step_phase_seconds_sum", {{"phase", phase}});
  }
  worker.pushes = change("pstrain_worker_push_latency_seconds_count", {});
  worker.push_seconds = change("pstrain_worker_push_latency_seconds_sum", {});
  worker.stale_pushes = change("pstrain_worker_requeued_batches_total", {{"cause", "stale_push"}});
  return worker;
}

// The highest parameter version on the parameter servers' pages.
int64_t HighestVersion(const std::vector<MetricsPage>& parameter_servers) {
  int64_t highest = 0;
  for (const MetricsPage& page : parameter_servers) {
    highest = std::max(highest, static_cast<int64_t>(page.Sum("pstrain_ps_version")));
  }
  return highest;
}

// The change of `name` summed over the parameter servers from `a` to `b`.
double ParameterServersChange(const std::string& name, const std::vector<MetricsPage>& a,
                              const std::vector<MetricsPage>& b) {
  double change = 0;
  for (const MetricsPage& page : b) change += page.Sum(name);
  for (const MetricsPage& page : a) change -= page.Sum(name);
  return change;
}

}  // namespace

double ThroughputWindow::ExamplesPerSecond() const {
  double examples = 0;
  for (const WorkerWindow& worker : workers) examples += worker.examples;
  return seconds > 0 ? examples / seconds : 0;
}

double ThroughputWindow::CpuSecondsPerThousandExamples() const {
  const double examples = ExamplesPerSecond() * seconds;
  return examples > 0 ? cpu_seconds / examples * 1000 : 0;
}

absl::StatusOr<std::unique_ptr<BenchCluster>> BenchCluster::Start(
    const BenchClusterLayout& layout, const std::string& run_dir,
    const std::string& checkpoint_root, const std::string& bin_dir,
    const std::vector<std::string>& coordinator_flags,
    const std::vector<std::string>& worker_flags, const std::map<std::string, TaskHost>& hosts) {
  LocalClusterOptions options;
  options.hosts = hosts;
  options.coordinator_flags = coordinator_flags;
  for (int i = 0; i < layout.num_workers; ++i) {
    options.task_flags[absl::StrCat("worker/", i)] = worker_flags;
  }
  options.num_ps = layout.num_ps;
  options.ps_replicas = layout.ps_replicas;
  options.num_workers = layout.num_workers;
  options.shared_memory = layout.shared_memory;
  options.evaluator = true;
  options.bin_dir = bin_dir;
  options.run_dir = run_dir;
  options.checkpoint_root = checkpoint_root;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  std::unique_ptr<BenchCluster> bench(new BenchCluster());
  bench->cluster_ = *std::move(cluster);
  bench->jobs_ = JobService::NewStub(grpc::CreateChannel(
      bench->cluster_->coordinator().grpc_address, grpc::InsecureChannelCredentials()));
  return bench;
}

BenchCluster::~BenchCluster() {
  if (cluster_ != nullptr) cluster_->Stop(absl::Seconds(15)).IgnoreError();
}

absl::Status BenchCluster::Stop() {
  absl::Status stopped = cluster_->Stop(absl::Seconds(15));
  cluster_.reset();
  return stopped;
}

std::vector<const LocalTask*> BenchCluster::TasksOf(const std::string& role) const {
  std::vector<const LocalTask*> tasks;
  for (const LocalTask& task : cluster_->tasks()) {
    if (task.role == role) tasks.push_back(&task);
  }
  return tasks;
}

absl::StatusOr<double> BenchCluster::CpuSeconds() {
  double total = 0;
  for (const LocalTask& task : cluster_->tasks()) {
    absl::StatusOr<MetricsPage> page = ScrapeMetrics(task, kScrapeTimeout);
    if (!page.ok()) return page.status();
    total += page->Sum("process_cpu_seconds_total");
  }
  return total;
}

absl::StatusOr<int> BenchCluster::Pid(const std::string& name) const {
  for (const LocalTask& task : cluster_->tasks()) {
    if (task.name() == name) return task.pid;
  }
  return absl::NotFoundError(absl::StrCat("the cluster has no task ", name));
}

absl::Status BenchCluster::Kill(const std::string& name) {
  absl::StatusOr<ExitStatus> ended = cluster_->KillTask(name, SIGKILL, kScrapeTimeout);
  return ended.ok() ? absl::OkStatus() : ended.status();
}

absl::Status BenchCluster::Restart(const std::string& name) {
  return cluster_->RestartTask(name);
}

int BenchCluster::num_workers() const { return static_cast<int>(TasksOf("worker").size()); }

absl::StatusOr<std::vector<MetricsPage>> BenchCluster::Scrape(
    const std::vector<const LocalTask*>& tasks) {
  std::vector<MetricsPage> pages;
  for (const LocalTask* task : tasks) {
    absl::StatusOr<MetricsPage> page = ScrapeMetrics(*task, kScrapeTimeout);
    if (!page.ok()) return page.status();
    pages.push_back(*std::move(page));
  }
  return pages;
}

absl::StatusOr<std::vector<MetricsPage>> BenchCluster::ScrapeWorkers() {
  return Scrape(TasksOf("worker"));
}

absl::StatusOr<std::vector<MetricsPage>> BenchCluster::ScrapeParameterServers() {
  return Scrape(TasksOf("ps"));
}

std::vector<std::string> BenchCluster::ParameterServerNames() const {
  std::vector<std::string> names;
  for (const LocalTask* task : TasksOf("ps")) names.push_back(task->name());
  return names;
}

absl::StatusOr<std::string> BenchCluster::Submit(const std::string& spec_text) {
  return SubmitJobSpec(*jobs_, spec_text, kCallTimeout);
}

absl::StatusOr<JobStatus> BenchCluster::Get(const std::string& job_id) {
  GetJobRequest request;
  request.set_job_id(job_id);
  JobStatus job;
  grpc::Status status = jobs_->GetJob(ContextWithDeadline(kCallTimeout).get(), request, &job);
  if (!status.ok()) return FromGrpc(status, absl::StrCat("reading job ", job_id));
  return job;
}

absl::StatusOr<JobStatus> BenchCluster::AwaitGlobalStep(const std::string& job_id, int64_t step,
                                                        absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<JobStatus> job = Get(job_id);
    if (!job.ok()) return job.status();
    if (job->global_step() >= step) return job;
    if (HasEnded(job->state())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " ended at global step ", job->global_step(), " before step ", step,
          ": ", JobState_Name(job->state()), " ", job->reason()));
    }
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "job ", job_id, " at global step ", job->global_step(), ", not ", step, " within ",
          absl::FormatDuration(timeout)));
    }
    // Fine enough for a time to training of seconds; GetJob is cheap.
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::Status BenchCluster::WaitForEveryWorker(const std::string& job_id,
                                              const std::vector<MetricsPage>& before,
                                              absl::Duration start_timeout) {
  const absl::Time give_up = absl::Now() + start_timeout;
  for (;;) {
    absl::StatusOr<std::vector<MetricsPage>> now = ScrapeWorkers();
    if (!now.ok()) return now.status();
    size_t started = 0;
    for (size_t i = 0; i < now->size(); ++i) {
      if ((*now)[i].Sum("pstrain_worker_steps_total") >
          before[i].Sum("pstrain_worker_steps_total")) {
        ++started;
      }
    }
    if (started == now->size()) return absl::OkStatus();
    absl::StatusOr<JobStatus> job = Get(job_id);
    if (!job.ok()) return job.status();
    if (HasEnded(job->state())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id, " ended before every worker trained: ", JobState_Name(job->state()), " ",
          job->reason()));
    }
    if (absl::Now() > give_up) {
      return absl::FailedPreconditionError(absl::StrCat(
          "only ", started, " of ", now->size(), " workers computed a step of job ", job_id,
          " within ", absl::FormatDuration(start_timeout), "; see the worker logs"));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::StatusOr<ThroughputWindow> BenchCluster::Measure(
    const std::string& job_id, const std::vector<MetricsPage>& before,
    absl::Duration start_timeout, absl::Duration warmup, absl::Duration window, int min_steps,
    absl::Duration max_window, const std::function<absl::Status()>& on_trained) {
  if (absl::Status started = WaitForEveryWorker(job_id, before, start_timeout); !started.ok()) {
    return started;
  }
  if (on_trained) {
    if (absl::Status done = on_trained(); !done.ok()) return done;
  }
  absl::SleepFor(warmup);

  absl::StatusOr<JobStatus> job_start = Get(job_id);
  if (!job_start.ok()) return job_start.status();
  absl::StatusOr<std::vector<MetricsPage>> ps_first = ScrapeParameterServers();
  if (!ps_first.ok()) return ps_first.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<MetricsPage>> first = ScrapeWorkers();
  if (!first.ok()) return first.status();
  absl::StatusOr<double> cpu_first = CpuSeconds();
  if (!cpu_first.ok()) return cpu_first.status();
  absl::SleepFor(window);
  // A large model takes seconds a step: the window stretches (up to
  // max_window) until every worker has computed min_steps in it.
  absl::Time end = absl::Now();
  absl::StatusOr<std::vector<MetricsPage>> last = ScrapeWorkers();
  if (!last.ok()) return last.status();
  auto fewest_steps = [&] {
    double fewest = -1;
    for (size_t i = 0; i < last->size(); ++i) {
      const double steps = (*last)[i].Sum("pstrain_worker_steps_total") -
                           (*first)[i].Sum("pstrain_worker_steps_total");
      if (fewest < 0 || steps < fewest) fewest = steps;
    }
    return fewest;
  };
  while (fewest_steps() < min_steps && absl::Now() - start < max_window) {
    absl::SleepFor(absl::Milliseconds(250));
    end = absl::Now();
    last = ScrapeWorkers();
    if (!last.ok()) return last.status();
  }
  absl::StatusOr<std::vector<MetricsPage>> ps_last = ScrapeParameterServers();
  if (!ps_last.ok()) return ps_last.status();
  absl::StatusOr<double> cpu_last = CpuSeconds();
  if (!cpu_last.ok()) return cpu_last.status();
  absl::StatusOr<JobStatus> job_end = Get(job_id);
  if (!job_end.ok()) return job_end.status();
  if (HasEnded(job_end->state())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id, " ended during the measured window: ", JobState_Name(job_end->state()), " ",
        job_end->reason()));
  }

  ThroughputWindow measured;
  measured.seconds = absl::ToDoubleSeconds(end - start);
  measured.global_steps = job_end->global_step() - job_start->global_step();
  measured.shard_updates = HighestVersion(*ps_last) - HighestVersion(*ps_first);
  measured.cpu_seconds = *cpu_last - *cpu_first;
  measured.replication_waits =
      ParameterServersChange("pstrain_ps_replication_wait_seconds_count", *ps_first, *ps_last);
  measured.replication_wait_seconds =
      ParameterServersChange("pstrain_ps_replication_wait_seconds_sum", *ps_first, *ps_last);
  const std::vector<const LocalTask*> workers = TasksOf("worker");
  for (size_t i = 0; i < workers.size(); ++i) {
    measured.workers.push_back(WorkerWindowBetween(workers[i]->name(), (*first)[i], (*last)[i]));
  }
  return measured;
}

absl::Status BenchCluster::StopAndWait(const std::string& job_id, absl::Duration timeout) {
  StopJobRequest request;
  request.set_job_id(job_id);
  request.set_immediately(true);
  StopJobResponse response;
  grpc::Status status = jobs_->StopJob(ContextWithDeadline(kCallTimeout).get(), request, &response);
  if (!status.ok()) return FromGrpc(status, absl::StrCat("stopping job ", job_id));
  const absl::Time give_up = absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<JobStatus> job = Get(job_id);
    if (!job.ok()) return job.status();
    if (HasEnded(job->state())) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", job_id, " still ", JobState_Name(job->state()), " ",
                       absl::FormatDuration(timeout), " after it was stopped"));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::StatusOr<TargetRun> BenchCluster::RunToTarget(const std::string& spec_text,
                                                    double target_accuracy,
                                                    absl::Duration timeout) {
  const absl::Time submitted = absl::Now();
  const absl::Time give_up = submitted + timeout;
  absl::StatusOr<std::string> job_id = Submit(spec_text);
  if (!job_id.ok()) return job_id.status();

  TargetRun run;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(give_up));
  WatchJobRequest request;
  request.set_job_id(*job_id);
  auto stream = jobs_->WatchJob(&context, request);
  JobEvent event;
  while (stream->Read(&event)) {
    if (!event.has_eval()) continue;
    auto accuracy = event.eval().metrics().find("accuracy");
    if (accuracy == event.eval().metrics().end()) continue;
    const double seconds = absl::ToDoubleSeconds(absl::Now() - submitted);
    run.evaluations.push_back({event.eval().checkpoint_step(), accuracy->second, seconds});
    if (!run.reached && accuracy->second >= target_accuracy) {
      run.reached = true;
      run.seconds = seconds;
      run.step = event.eval().checkpoint_step();
      run.accuracy = accuracy->second;
    }
  }
  grpc::Status streamed = stream->Finish();
  absl::StatusOr<JobStatus> final_status = Get(*job_id);
  if (!final_status.ok()) return final_status.status();
  run.final_status = *final_status;
  if (!HasEnded(final_status->state())) {
    // The deadline passed first: free the cluster for what follows.
    StopAndWait(*job_id, absl::Seconds(30)).IgnoreError();
    if (!run.reached) {
      return absl::DeadlineExceededError(absl::StrCat(
          "job ", *job_id, " did not reach test accuracy ", target_accuracy, " within ",
          absl::FormatDuration(timeout), " (", run.evaluations.size(), " evaluations, global step ",
          final_status->global_step(), ", watch: ", streamed.error_message(), ")"));
    }
  }
  return run;
}

}  // namespace bench
}  // namespace pstrain
