#include "bench/sparse/sparse_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace {

// Fewer rows than this and the fixed costs (gRPC buffers, the dense
// variables) would dominate the memory per row.
constexpr double kMinRowsForMemory = 1e6;

std::string Mib(double bytes) { return absl::StrFormat("%.0f MiB", bytes / 1048576.0); }

std::string Fixed(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

std::string PathLabel(const ClusterRun& run) {
  return run.shared_memory ? "shared memory" : "gRPC bytes";
}

// Each measured cluster beside its single-process references, and the
// issue's targets, read on the first cluster.
void AddPathsSection(const SparseReport& r, bench::MarkdownReport& report) {
  bench::MarkdownTable table({"data path", "examples/s", "single process examples/s", "ratio",
                              "examples per CPU second", "single process", "ratio",
                              "data_wait share of the workers' time"});
  auto add = [&table, &r](const ClusterRun& run) {
    table.AddRow({PathLabel(run), Fixed(run.ExamplesPerSec(), 0),
                  Fixed(run.SingleProcessExamplesPerSec(), 0),
                  Fixed(run.ExamplesPerSec() / run.SingleProcessExamplesPerSec(), 2),
                  Fixed(run.ExamplesPerCpuSecond(), 0),
                  Fixed(run.SingleProcessExamplesPerCpuSecond(), 0),
                  Fixed(run.ExamplesPerCpuSecond() / run.SingleProcessExamplesPerCpuSecond(), 2),
                  absl::StrFormat("%.1f%%", 100 * run.DataWaitShare(r.workers))});
  };
  add(r.cluster);
  if (r.grpc_cluster.has_value()) add(*r.grpc_cluster);
  report.SubHeading("Both data paths");
  report.Paragraph(
      "Shared memory: the workers and the parameter servers talk through shared-memory lanes, "
      "as `pstrain local` runs them; gRPC bytes: every process runs with `--shm=false`, as "
      "between hosts. Each cluster trains the same job from scratch for the same time and is "
      "measured over the same window; each is compared with the single-process runs just "
      "before and just after it.");
  report.Table(table);
  const ClusterRun& run = r.cluster;
  const double ratio = run.ExamplesPerSec() / run.SingleProcessExamplesPerSec();
  const double per_cpu = run.ExamplesPerCpuSecond() / run.SingleProcessExamplesPerCpuSecond();
  const std::string path = absl::StrCat(" (", PathLabel(run), ")");
  report.Target(absl::StrCat("examples/s >= 0.9x the single process", path), ratio >= 0.9,
                absl::StrCat(Fixed(ratio, 2), "x"));
  report.Target(absl::StrCat("examples per CPU second >= 0.7x the single process's", path),
                per_cpu >= 0.7, absl::StrCat(Fixed(per_cpu, 2), "x"));
  const double data_wait = run.DataWaitShare(r.workers);
  report.Target(absl::StrCat("data_wait under 5% of the workers' time", path), data_wait < 0.05,
                absl::StrFormat("%.1f%%", 100 * data_wait));
}

}  // namespace

double ClusterRun::WindowSeconds() const {
  return absl::ToDoubleSeconds(window_end.time - window_start.time);
}

double ClusterRun::SingleProcessExamplesPerSec() const {
  return (single_process_before.examples_per_sec + single_process_after.examples_per_sec) / 2;
}

double ClusterRun::ExamplesPerCpuSecond() const {
  auto cpu = [](const ClusterSample& s) {
    return s.coordinator_cpu_seconds + s.ps_cpu_seconds + s.worker_cpu_seconds;
  };
  return (window_end.examples - window_start.examples) / (cpu(window_end) - cpu(window_start));
}

double ClusterRun::SingleProcessExamplesPerCpuSecond() const {
  return (single_process_before.examples / single_process_before.cpu_seconds +
          single_process_after.examples / single_process_after.cpu_seconds) /
         2;
}

double ClusterRun::DataWaitShare(int workers) const {
  return (window_end.data_wait_seconds - window_start.data_wait_seconds) /
         (WindowSeconds() * std::max(1, workers));
}

double ClusterRun::ExamplesPerSec() const {
  return (window_end.examples - window_start.examples) / WindowSeconds();
}

double SparseReport::RowsPulledPerSec() const {
  const ClusterSample& start = cluster.window_start;
  const ClusterSample& end = cluster.window_end;
  const double steps = end.steps - start.steps;
  const double row_bytes = end.PullBytes() - start.PullBytes() - steps * job.DenseFloats() * 4.0;
  return row_bytes / job.PulledBytesPerId() / cluster.WindowSeconds();
}

double SparseReport::RssBytesPerRow() const {
  const double rows = cluster.window_end.DeepRows();
  return rows > 0 ? (cluster.window_end.RssBytes() - cluster.base.RssBytes()) / rows : 0;
}

std::string SparseReport::Title(const SparseJob& job) {
  const std::string ids = job.vocabulary % 1000000 == 0
                              ? absl::StrCat(job.vocabulary / 1000000, "M")
                              : absl::StrCat(job.vocabulary);
  return absl::StrCat("Sparse training on a local cluster: wide-and-deep over a ", ids,
                      "-id embedding table");
}

void SparseReport::AppendTo(bench::MarkdownReport& report) const {
  const ClusterSample& base = cluster.base;
  const ClusterSample& window_start = cluster.window_start;
  const ClusterSample& window_end = cluster.window_end;
  const double train_seconds = cluster.train_seconds;
  const bench::SingleProcessRun& single_process_before = cluster.single_process_before;
  const bench::SingleProcessRun& single_process_after = cluster.single_process_after;
  const double examples_per_sec = cluster.ExamplesPerSec();
  const double single_process = cluster.SingleProcessExamplesPerSec();
  const double examples_ratio = examples_per_sec / single_process;
  const double rows_per_sec = RowsPulledPerSec();
  const double rows_per_shard = rows_per_sec / num_ps;
  const double rows = window_end.DeepRows();
  const double raw = static_cast<double>(job.RawBytesPerId());
  const double bytes_per_row = RssBytesPerRow();
  const double accounted_per_row = rows > 0 ? window_end.TableBytes() / rows : 0;
  const double alone_raw = job.dim * 4.0 * (1 + job.SlotsPerValue());
  const std::string slots = job.SlotsPerValue() == 0 ? "SGD, no optimizer slot"
                                                     : "Adagrad, one accumulator slot per value";

  report.Paragraph(absl::StrFormat(
      "Real processes on loopback: a coordinator, %d parameter servers and %d workers (%s) train "
      "wide-and-deep (%d fields, embedding dim %d, hidden %s, batch %d, %s, async) on "
      "synthetic click logs whose ids span a dynamic table of %d ids (ranks Zipf with exponent "
      "%g, the generator's closest to uniform). The table's budget (%s per shard and table) is "
      "%.1fx the raw bytes of half the ids, so no row is evicted. After %d s of training, "
      "examples/s come from the workers' `pstrain_worker_examples_total` over the last %.0f s; "
      "ids pulled per second from the shards' `pstrain_ps_pull_bytes_total` over the same "
      "window, less the dense variables every step pulls whole (%lld floats), divided by the "
      "%lld bytes an id's rows carry (deep row and wide weight); examples per CPU second "
      "divide by the user and system time (/proc/<pid>/stat) of every process, which moves "
      "less with other work on the machine than wall time; memory per row is the "
      "growth of the shards' VmRSS since before the job was submitted divided by the "
      "deep/embedding rows they hold at the end (`pstrain_ps_embedding_rows`). Raw bytes of an "
      "id: %lld (%d + 1 floats, %s). References in the same run: `pstrain train-local` on the "
      "same job for %.0f s before the cluster and again after it (examples/s: their mean), and one "
      "shard alone in the benchmark's process (the "
      "same ShardStore code, no gRPC, one thread) holding the job's two tables with %lld rows "
      "each: ReadRows of random deep/embedding ids in batches, and its own VmRSS growth per row "
      "created in each table.",
      num_ps, workers, PathLabel(cluster), job.num_fields, job.dim,
      absl::StrCat("[", absl::StrJoin(job.hidden_units, ", "), "]"), job.batch_size, slots,
      job.vocabulary, job.zipf_exponent, Mib(job.max_bytes_per_shard),
      1.0 * job.max_bytes_per_shard / (job.vocabulary / num_ps * alone_raw),
      static_cast<int>(train_seconds - cluster.WindowSeconds() + 0.5), cluster.WindowSeconds(),
      static_cast<long long>(job.DenseFloats()), static_cast<long long>(job.PulledBytesPerId()),
      static_cast<long long>(job.RawBytesPerId()), job.dim, slots,
      single_process_before.train_seconds, static_cast<long long>(shard_alone.rows)));
  report.Paragraph("Command (from the repository root, after a `-c opt` build):");
  report.Command(command);

  bench::MarkdownTable table({"figure", "cluster", "reference", "ratio"});
  table.AddRow({"examples/s", Fixed(examples_per_sec, 0),
                absl::StrFormat("%.0f (single process: %.0f before, %.0f after)", single_process,
                                single_process_before.examples_per_sec,
                                single_process_after.examples_per_sec),
                Fixed(examples_ratio, 2)});
  table.AddRow(
      {"examples per CPU second (cluster: every process)", Fixed(cluster.ExamplesPerCpuSecond(), 0),
       absl::StrFormat("%.0f (single process)", cluster.SingleProcessExamplesPerCpuSecond()),
       Fixed(cluster.ExamplesPerCpuSecond() / cluster.SingleProcessExamplesPerCpuSecond(), 2)});
  table.AddRow(
      {"ids pulled/s, per shard",
       absl::StrFormat("%.0f (%.1f per example)", rows_per_shard, rows_per_sec / examples_per_sec),
       absl::StrFormat("%.0f (shard alone, ReadRows)", shard_alone.read_rows_per_sec),
       Fixed(rows_per_shard / shard_alone.read_rows_per_sec, 3)});
  table.AddRow({"shard memory per id held (VmRSS growth / rows)",
                absl::StrFormat("%.0f B", bytes_per_row),
                absl::StrFormat("%.0f B raw (%d x 4 + 4, %s)", raw, job.dim,
                                job.SlotsPerValue() == 0 ? "no slot" : "x2 for the slot"),
                Fixed(bytes_per_row / raw, 2)});
  table.AddRow({"the shards' own accounting per id (`pstrain_ps_embedding_bytes` / rows)",
                absl::StrFormat("%.0f B", accounted_per_row), absl::StrFormat("%.0f B raw", raw),
                Fixed(accounted_per_row / raw, 2)});
  table.AddRow({"shard alone: VmRSS growth per deep/embedding row created",
                absl::StrFormat("%.0f B", shard_alone.rss_bytes_per_row),
                absl::StrFormat("%.0f B raw", alone_raw),
                Fixed(shard_alone.rss_bytes_per_row / alone_raw, 2)});
  const double wide_raw = 4.0 * (1 + job.SlotsPerValue());
  table.AddRow({"shard alone: VmRSS growth per wide/weights row created",
                absl::StrFormat("%.0f B", shard_alone.wide_rss_bytes_per_row),
                absl::StrFormat("%.0f B raw", wide_raw),
                Fixed(shard_alone.wide_rss_bytes_per_row / wide_raw, 2)});
  table.AddRow({"new ids given rows per second (a row in each table)",
                absl::StrFormat("%.0f (cluster, over the whole training)", rows / train_seconds),
                absl::StrFormat("%.0f (shard alone, pushes of new ids, deep table)",
                                shard_alone.created_rows_per_sec),
                ""});
  table.AddRow(
      {"deep/embedding rows held at the end",
       absl::StrFormat("%.0f (%.1f%% of the %.0fM ids; wide/weights %.0f)", rows,
                       100.0 * rows / job.vocabulary, job.vocabulary / 1e6, window_end.WideRows()),
       "", ""});
  table.AddRow({"rows evicted", Fixed(window_end.Evictions(), 0), "", ""});
  const double window = cluster.WindowSeconds();
  table.AddRow(
      {"CPU over the window, cores busy: shards / workers / coordinator",
       absl::StrFormat(
           "%.2f / %.2f / %.2f", (window_end.ps_cpu_seconds - window_start.ps_cpu_seconds) / window,
           (window_end.worker_cpu_seconds - window_start.worker_cpu_seconds) / window,
           (window_end.coordinator_cpu_seconds - window_start.coordinator_cpu_seconds) / window),
       "", ""});
  for (size_t i = 0; i < window_end.shards.size(); ++i) {
    const ShardSample& s = window_end.shards[i];
    table.AddRow(
        {absl::StrFormat("ps/%d: VmRSS before the job / at the end, rows", static_cast<int>(i)),
         absl::StrFormat("%s / %s, %.0f", Mib(base.shards[i].rss_bytes), Mib(s.rss_bytes),
                         s.deep_rows),
         "", ""});
  }
  table.AddRow(
      {"single process: peak VmRSS",
       Mib(std::max(single_process_before.peak_rss_bytes, single_process_after.peak_rss_bytes)), "",
       ""});
  report.Table(table);
  AddPathsSection(*this, report);

  const double deep_share = shard_alone.rss_bytes_per_row /
                            (shard_alone.rss_bytes_per_row + shard_alone.wide_rss_bytes_per_row);
  report.Paragraph(absl::StrFormat(
      "Where a shard's bytes per id go, from the shard-alone figures: %.0f B for the deep row "
      "(%.0f B raw) and %.0f B for the wide weight (%.0f B raw), %.0f%% and %.0f%% of the %.0f B "
      "the two cost together; the cluster's %.0f B per id is %.2fx that sum. The shards' own "
      "accounting (which the budget is checked against) counts %.0f B per id. The cluster "
      "trained %.0f examples of the %lld records%s.",
      shard_alone.rss_bytes_per_row, alone_raw, shard_alone.wide_rss_bytes_per_row, wide_raw,
      100 * deep_share, 100 * (1 - deep_share),
      shard_alone.rss_bytes_per_row + shard_alone.wide_rss_bytes_per_row, bytes_per_row,
      bytes_per_row / (shard_alone.rss_bytes_per_row + shard_alone.wide_rss_bytes_per_row),
      accounted_per_row, window_end.examples, static_cast<long long>(job.num_examples),
      window_end.examples > job.num_examples
          ? " (more than one pass: records read again bring no new ids)"
          : " (less than one pass: every example drew new ids)"));
  if (rows < kMinRowsForMemory) {
    report.Paragraph(absl::StrFormat(
        "The table held only %.0f rows, fewer than %.0f: fixed costs (gRPC buffers, the dense "
        "variables) weigh on the memory per row; run longer for a figure that speaks of the "
        "rows.",
        rows, kMinRowsForMemory));
  }
}

}  // namespace pstrain
