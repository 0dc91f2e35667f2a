#ifndef PSTRAIN_BENCH_CLUSTER_THROUGHPUT_FIGURES_H_
#define PSTRAIN_BENCH_CLUSTER_THROUGHPUT_FIGURES_H_

// Figures derived from measured windows, as the cluster_bench tables and
// chart show them.

#include <cstdint>
#include <string>
#include <vector>

#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/throughput_measurement.h"

namespace pstrain {
namespace bench {

// `value` with `decimals` digits after the point.
std::string Fixed(double value, int decimals);

// StepPhases() and then "idle".
std::vector<std::string> BreakdownSegments();

// Mean ms per step of one worker in a window, by phase, with "idle" (the
// window's wall time the phases do not account for) last.
std::vector<double> PhaseMsPerStep(const WorkerWindow& worker, double window_seconds);

// ns of wall time per parameter per global update: the window divided by
// the steps all workers computed, divided by the model's parameters.
double NsPerParameterStep(const ThroughputPoint& point);
double ReferenceNsPerParameterStep(const SingleProcessRun& run, const std::vector<int64_t>& hidden);

// The workers' mean ms per step by phase and idle, "a / b / c / d / e".
std::string MeanPhasesText(const ThroughputWindow& window);
// data_wait's share of the workers' mean step.
double DataWaitShare(const ThroughputWindow& window);
// The workers' mean ms per push, or "" when none pushed.
std::string MeanPushLatencyText(const ThroughputWindow& window);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_THROUGHPUT_FIGURES_H_
