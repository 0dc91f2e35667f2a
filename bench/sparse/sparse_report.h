#ifndef PSTRAIN_BENCH_SPARSE_SPARSE_REPORT_H_
#define PSTRAIN_BENCH_SPARSE_SPARSE_REPORT_H_

// The figures of one run of the sparse benchmark and the Markdown section
// that reports them (bench/run_all.sh's contract: what is measured, the
// command, references, table, targets; the report adds the load averages).

#include <optional>
#include <string>

#include "bench/common/single_process_reference.h"
#include "bench/report/markdown_report.h"
#include "bench/sparse/cluster_sample.h"
#include "bench/sparse/shard_alone_reference.h"
#include "bench/sparse/sparse_job.h"

namespace pstrain {

// One cluster's training: samples before the job was submitted, and at the
// start and end of the measured window (the last of the training), with
// the single-process runs just before and just after it.
struct ClusterRun {
  bool shared_memory = true;  // workers and shards talked through lanes
  ClusterSample base;
  ClusterSample window_start;
  ClusterSample window_end;
  double train_seconds = 0;  // from the first example to window_end
  bench::SingleProcessRun single_process_before;
  bench::SingleProcessRun single_process_after;

  double WindowSeconds() const;
  // The mean of the two single-process runs.
  double SingleProcessExamplesPerSec() const;
  double ExamplesPerSec() const;
  // Examples per CPU second of every process of the cluster over the
  // window, and of the single process (the mean of its two runs): figures
  // that move less with other processes' load than examples/s.
  double ExamplesPerCpuSecond() const;
  double SingleProcessExamplesPerCpuSecond() const;
  // The share of the workers' time in the window that their steps waited
  // for data.
  double DataWaitShare(int workers) const;
};

struct SparseReport {
  std::string command;
  SparseJob job;
  int num_ps = 2;
  int workers = 0;
  ShardAloneFigures shard_alone;
  // The cluster the memory and row figures and the targets are read on,
  // and, when measured, the same cluster with every byte over gRPC.
  ClusterRun cluster;
  std::optional<ClusterRun> grpc_cluster;

  // Ids pulled per second over the window: the shards' pulled bytes less
  // the dense variables every step pulls whole, over the bytes of one id
  // (its deep row and its wide weight).
  double RowsPulledPerSec() const;
  // The shards' VmRSS growth since before the job, per deep/embedding row
  // held at the end (each id also holds a wide/weights row).
  double RssBytesPerRow() const;

  // The section's title, known before the run.
  static std::string Title(const SparseJob& job);
  // Adds what was measured, the command and the table of figures.
  void AppendTo(bench::MarkdownReport& report) const;
};

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_SPARSE_REPORT_H_
