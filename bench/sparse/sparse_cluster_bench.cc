// Sparse training end to end: wide-and-deep on synthetic click logs over a
// dynamic embedding table, on a local cluster of real processes on
// loopback (coordinator, 2 parameter servers, workers). Measures examples/s,
// embedding rows pulled per second and the shards' memory per row held,
// each beside a reference measured in the same run: the single-process
// trainer (`pstrain train-local`) on the same job, and one shard alone in
// this process (the same table code, no gRPC). The cluster trains through
// shared-memory lanes, as `pstrain local` runs it, then again over gRPC
// only, and the report sets the two side by side.
//
//   bazel build -c opt //bench/sparse:sparse_cluster_bench //client:pstrain
//       //server/coordinator:pstrain-coordinator //server/ps:pstrain-ps //worker:pstrain-worker
//   bazel-bin/bench/sparse/sparse_cluster_bench --report=sparse.md

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/common/job_submission.h"
#include "bench/common/single_process_reference.h"
#include "bench/common/text_file.h"
#include "bench/report/markdown_report.h"
#include "bench/sparse/cluster_sample.h"
#include "bench/sparse/shard_alone_reference.h"
#include "bench/sparse/sparse_job.h"
#include "bench/sparse/sparse_report.h"
#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "protos/coordinator.grpc.pb.h"
#include "common/process/allocator_tuning.h"

DEFINE_string(report, "", "write the Markdown section here (default: stdout)");
DEFINE_int64(vocabulary, 10000000, "ids of the embedding table (fields x ids per field)");
DEFINE_int32(fields, 8, "categorical fields per example");
DEFINE_int32(dim, 64, "floats per embedding row");
DEFINE_double(zipf, 1.0001, "Zipf exponent of the ids' ranks (> 1; near 1 touches most ids)");
DEFINE_int64(examples, 8000000,
             "records of the training data; more than the run reads, so every record brings new "
             "draws of ids");
DEFINE_int32(batch, 256, "examples per step");
DEFINE_string(optimizer, "sgd", "sgd (no slot) or adagrad (one slot per value)");
DEFINE_int32(workers, 2, "worker processes");
DEFINE_bool(shm, true,
            "the cluster read for the targets and the memory figures: workers and parameter "
            "servers talk through shared-memory lanes, as `pstrain local` runs them "
            "(--shm=false: over gRPC only, as between hosts)");
DEFINE_bool(compare_grpc, true,
            "with --shm, train a second cluster over gRPC only (--shm=false) for the same time "
            "and report both paths side by side");
DEFINE_double(budget_factor, 1.5,
              "per-shard table budget as this multiple of the raw bytes of vocabulary/2 rows, "
              "so no row is evicted");
DEFINE_int32(reference_secs, 20,
             "seconds of each single-process training (the examples/s reference), run before "
             "and after the cluster");
DEFINE_int64(shard_alone_rows, 1000000, "rows of the shard-alone reference table");
DEFINE_int32(shard_alone_batch, 1024, "ids per ReadRows of the shard-alone reference");
DEFINE_int32(train_secs, 180, "seconds the cluster trains, from its first example");
DEFINE_int32(window_secs, 60, "the measured window: the last seconds of the training");
DEFINE_int32(sample_secs, 10, "seconds between progress lines");
DEFINE_string(bin_dir, "",
              "folder of pstrain, pstrain-coordinator, pstrain-ps and pstrain-worker (default: "
              "this program's Bazel runfiles)");
DEFINE_bool(keep_run_dir, false, "keep the logs and job files (always kept on a failure)");

namespace pstrain {
namespace {

constexpr int kNumPs = 2;

void Progress(const std::string& line) {
  std::fprintf(stderr, "sparse_cluster_bench: %s\n", line.c_str());
}

absl::StatusOr<std::string> Locate(const std::string& name) {
  absl::StatusOr<std::string> path = LocateBinary(name, FLAGS_bin_dir);
  if (!path.ok()) {
    return absl::NotFoundError(absl::StrCat(
        name,
        " not found; build it first with `bazel build -c opt //bench/sparse/... "
        "//client:pstrain //server/coordinator:pstrain-coordinator //server/ps:pstrain-ps "
        "//worker:pstrain-worker`. ",
        path.status().message()));
  }
  return path;
}

std::string SampleLine(const ClusterSample& s, const ClusterSample& previous, absl::Time start,
                       int64_t base_rss) {
  const double dt = absl::ToDoubleSeconds(s.time - previous.time);
  return absl::StrFormat(
      "cluster %3.0fs: %.0f examples (%.0f/s), %.2fM rows held, %.2fM evicted, shards' RSS +%.0f "
      "MiB",
      absl::ToDoubleSeconds(s.time - start), s.examples,
      dt > 0 ? (s.examples - previous.examples) / dt : 0.0, s.DeepRows() / 1e6, s.Evictions() / 1e6,
      (s.RssBytes() - base_rss) / 1048576.0);
}

// Waits `duration` while printing a progress line every --sample_secs; the
// sample at its end. Fails as soon as a process of the cluster has ended.
absl::StatusOr<ClusterSample> TrainFor(LocalCluster& cluster, absl::Duration duration,
                                       absl::Time start, int64_t base_rss,
                                       ClusterSample* previous) {
  const absl::Time end = absl::Now() + duration;
  for (;;) {
    const absl::Time now = absl::Now();
    absl::SleepFor(std::min(end - now, absl::Seconds(FLAGS_sample_secs)));
    if (std::optional<TaskExit> exit = cluster.FirstExitedTask(); exit.has_value()) {
      return absl::InternalError(absl::StrCat(exit->task.name(), " ended (", exit->exit.ToString(),
                                              "); end of its log:\n",
                                              TailOfFile(exit->task.log_path, 20)));
    }
    absl::StatusOr<ClusterSample> sample = SampleCluster(cluster);
    if (!sample.ok()) return sample.status();
    Progress(SampleLine(*sample, *previous, start, base_rss));
    *previous = *sample;
    if (absl::Now() >= end) return sample;
  }
}

// Starts a cluster (lanes on or off), trains `job` on it for --train_secs
// and fills `run`'s samples: before the job, and the window's start and
// end.
absl::Status TrainCluster(const SparseJob& job, bool shared_memory, const std::string& run_dir,
                          ClusterRun& run) {
  LocalClusterOptions options;
  options.num_ps = kNumPs;
  options.num_workers = FLAGS_workers;
  options.evaluator = false;
  options.shared_memory = shared_memory;
  options.bin_dir = FLAGS_bin_dir;
  options.run_dir = absl::StrCat(run_dir, "/cluster-", shared_memory ? "shm" : "grpc");
  options.checkpoint_root = absl::StrCat(options.run_dir, "/checkpoints");
  std::filesystem::create_directories(options.checkpoint_root);
  const std::string label = shared_memory ? "cluster (shared memory)" : "cluster (gRPC only)";
  Progress(absl::StrCat(label, ": starting a coordinator, ", kNumPs, " parameter servers and ",
                        FLAGS_workers, " workers; logs in ", options.run_dir));
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  absl::StatusOr<ClusterSample> base = SampleCluster(**cluster);
  if (!base.ok()) return base.status();
  run.base = *base;
  const std::string spec_text = job.Text();
  RETURN_IF_ERROR(bench::WriteTextFile(options.run_dir + "/job.pbtxt", spec_text));
  auto jobs = JobService::NewStub(grpc::CreateChannel((*cluster)->coordinator().grpc_address,
                                                      grpc::InsecureChannelCredentials()));
  absl::StatusOr<std::string> job_id = bench::SubmitJobSpec(*jobs, spec_text, absl::Seconds(60));
  if (!job_id.ok()) return job_id.status();
  Progress(label + ": submitted job " + *job_id + "; waiting for its first examples");

  ClusterSample previous = *base;
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (previous.examples == 0) {
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError("the cluster trained no example within 120 s; logs in " +
                                         options.run_dir);
    }
    absl::StatusOr<ClusterSample> s =
        TrainFor(**cluster, absl::Seconds(1), base->time, base->RssBytes(), &previous);
    if (!s.ok()) return s.status();
  }
  const absl::Time start = previous.time;
  absl::StatusOr<ClusterSample> window_start =
      TrainFor(**cluster, absl::Seconds(FLAGS_train_secs - FLAGS_window_secs), start,
               base->RssBytes(), &previous);
  if (!window_start.ok()) return window_start.status();
  run.window_start = *window_start;
  Progress(absl::StrCat(label, ": measuring the last ", FLAGS_window_secs, " s"));
  absl::StatusOr<ClusterSample> window_end =
      TrainFor(**cluster, absl::Seconds(FLAGS_window_secs), start, base->RssBytes(), &previous);
  if (!window_end.ok()) return window_end.status();
  run.window_end = *window_end;
  run.train_seconds = absl::ToDoubleSeconds(window_end->time - start);

  Progress(label + ": stopping");
  absl::Status stopped = (*cluster)->Stop(absl::Seconds(60));
  if (!stopped.ok()) Progress(label + ": not every process exited cleanly: " + stopped.ToString());
  return absl::OkStatus();
}

absl::Status Run(const std::string& command, const std::string& run_dir) {
  SparseReport report;
  report.command = command;
  report.workers = FLAGS_workers;
  report.num_ps = kNumPs;
  SparseJob& job = report.job;
  job.vocabulary = FLAGS_vocabulary;
  job.num_fields = FLAGS_fields;
  job.dim = FLAGS_dim;
  job.zipf_exponent = FLAGS_zipf;
  job.num_examples = FLAGS_examples;
  job.batch_size = FLAGS_batch;
  job.optimizer = FLAGS_optimizer;
  RETURN_IF_ERROR(job.Validate());
  // Records the load average at the start.
  bench::MarkdownReport markdown(SparseReport::Title(job));
  if (FLAGS_workers < 1 || FLAGS_window_secs < 1 || FLAGS_train_secs <= FLAGS_window_secs ||
      FLAGS_reference_secs < 1 || FLAGS_shard_alone_rows < 1 || FLAGS_budget_factor < 1) {
    return absl::InvalidArgumentError(
        "need --workers >= 1, --reference_secs >= 1, --shard_alone_rows >= 1, "
        "--budget_factor >= 1 and --train_secs > --window_secs >= 1");
  }
  // Budget: raw bytes of half the vocabulary (one shard's share) times the
  // factor, so the hash's imbalance between shards evicts nothing.
  job.max_bytes_per_shard = static_cast<int64_t>(FLAGS_budget_factor * (job.vocabulary / kNumPs) *
                                                 job.dim * 4 * (1 + job.SlotsPerValue()));

  absl::StatusOr<std::string> pstrain = Locate("pstrain");
  if (!pstrain.ok()) return pstrain.status();
  for (const char* daemon : {"pstrain-coordinator", "pstrain-ps", "pstrain-worker"}) {
    RETURN_IF_ERROR(Locate(daemon).status());
  }

  // 1. One shard alone, in this process.
  Progress(absl::StrCat("shard alone: creating ", FLAGS_shard_alone_rows, " rows of ", job.dim,
                        " floats, then reading random rows for 5 s"));
  absl::StatusOr<ShardAloneFigures> alone =
      MeasureShardAlone(job, FLAGS_shard_alone_rows, FLAGS_shard_alone_batch, absl::Seconds(5));
  if (!alone.ok()) return alone.status();
  report.shard_alone = *alone;
  Progress(absl::StrFormat("shard alone: %.2fM rows/s read, %.2fM rows/s created, %.0f B/row",
                           alone->read_rows_per_sec / 1e6, alone->created_rows_per_sec / 1e6,
                           alone->rss_bytes_per_row));

  // 2. The single-process trainer on the same job, before each cluster and
  // again after the last: the load of a shared machine moves between them.
  SparseJob reference_job = job;
  reference_job.max_seconds = FLAGS_reference_secs;
  const std::string reference_spec = run_dir + "/single_process.pbtxt";
  RETURN_IF_ERROR(bench::WriteTextFile(reference_spec, reference_job.Text()));
  int single_runs = 0;
  auto run_single_process = [&]() -> absl::StatusOr<bench::SingleProcessRun> {
    Progress(absl::StrCat("single process: pstrain train-local for ", FLAGS_reference_secs, " s"));
    absl::StatusOr<bench::SingleProcessRun> single =
        bench::RunSingleProcess(*pstrain, reference_spec, /*extra_args=*/{},
                                absl::StrCat(run_dir, "/single_process_", ++single_runs, ".log"),
                                absl::Seconds(FLAGS_reference_secs + 120));
    if (single.ok()) {
      Progress(absl::StrFormat("single process: %.0f examples/s", single->examples_per_sec));
    }
    return single;
  };
  absl::StatusOr<bench::SingleProcessRun> single = run_single_process();
  if (!single.ok()) return single.status();

  // 3. The cluster, and the same cluster over gRPC only.
  std::vector<bool> paths = {FLAGS_shm};
  if (FLAGS_shm && FLAGS_compare_grpc) paths.push_back(false);
  for (bool shared_memory : paths) {
    ClusterRun run;
    run.shared_memory = shared_memory;
    run.single_process_before = *single;
    RETURN_IF_ERROR(TrainCluster(job, shared_memory, run_dir, run));
    single = run_single_process();
    if (!single.ok()) return single.status();
    run.single_process_after = *single;
    if (shared_memory == FLAGS_shm) {
      report.cluster = run;
    } else {
      report.grpc_cluster = run;
    }
  }

  report.AppendTo(markdown);
  if (FLAGS_report.empty()) {
    std::fputs(markdown.Render().c_str(), stdout);
  } else {
    RETURN_IF_ERROR(markdown.WriteTo(FLAGS_report));
    Progress("report written to " + FLAGS_report);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  // The command as run from the repository root, whichever path started it.
  std::vector<std::string> words(argv + 1, argv + argc);
  words.insert(words.begin(), "bazel-bin/bench/sparse/sparse_cluster_bench");
  const std::string command = absl::StrJoin(words, " ");
  gflags::SetUsageMessage(
      "sparse training on a local cluster against the single-process trainer and one shard "
      "alone");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  pstrain::TuneAllocatorForLargeBuffers();

  const char* tmp = std::getenv("TMPDIR");
  std::string run_dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/pstrain-sparse-XXXXXX");
  if (::mkdtemp(run_dir.data()) == nullptr) {
    std::fprintf(stderr, "sparse_cluster_bench: cannot create a folder like %s\n", run_dir.c_str());
    return 1;
  }
  absl::Status status = pstrain::Run(command, run_dir);
  if (!status.ok()) {
    std::fprintf(stderr, "sparse_cluster_bench: FAILED: %s\n(logs kept in %s)\n",
                 status.ToString().c_str(), run_dir.c_str());
    return 1;
  }
  if (!FLAGS_keep_run_dir) {
    std::error_code ignored;
    std::filesystem::remove_all(run_dir, ignored);
  }
  return 0;
}
