#include "bench/cluster/throughput_figures.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/bench_job.h"

namespace pstrain {
namespace bench {

std::string Fixed(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

std::vector<std::string> BreakdownSegments() {
  std::vector<std::string> segments = StepPhases();
  segments.push_back("idle");
  return segments;
}

std::vector<double> PhaseMsPerStep(const WorkerWindow& worker, double window_seconds) {
  std::vector<double> ms;
  double accounted = 0;
  for (const std::string& phase : StepPhases()) {
    const double seconds = worker.phase_seconds.at(phase);
    accounted += seconds;
    ms.push_back(worker.steps > 0 ? seconds / worker.steps * 1e3 : 0);
  }
  ms.push_back(worker.steps > 0 ? (window_seconds - accounted) / worker.steps * 1e3 : 0);
  return ms;
}

double NsPerParameterStep(const ThroughputPoint& point) {
  double steps = 0;
  for (const WorkerWindow& worker : point.window.workers) steps += worker.steps;
  return steps > 0 ? point.window.seconds / steps / MlpParameters(point.hidden_units) * 1e9 : 0;
}

double ReferenceNsPerParameterStep(const SingleProcessRun& run,
                                   const std::vector<int64_t>& hidden) {
  return run.steps > 0 ? run.train_seconds / run.steps / MlpParameters(hidden) * 1e9 : 0;
}

std::string MeanPhasesText(const ThroughputWindow& window) {
  std::vector<double> mean(StepPhases().size() + 1, 0);
  for (const WorkerWindow& worker : window.workers) {
    std::vector<double> ms = PhaseMsPerStep(worker, window.seconds);
    for (size_t i = 0; i < ms.size(); ++i) mean[i] += ms[i] / window.workers.size();
  }
  std::vector<std::string> text;
  for (double ms : mean) text.push_back(Fixed(ms, ms >= 100 ? 0 : 1));
  return absl::StrJoin(text, " / ");
}

double DataWaitShare(const ThroughputWindow& window) {
  double data_wait = 0, step = 0;
  for (const WorkerWindow& worker : window.workers) {
    const std::vector<double> phases = PhaseMsPerStep(worker, window.seconds);
    data_wait += phases.front();  // StepPhases() starts with data_wait
    for (double ms : phases) step += ms;
  }
  return step > 0 ? data_wait / step : 0;
}

std::string MeanPushLatencyText(const ThroughputWindow& window) {
  double pushes = 0, seconds = 0;
  for (const WorkerWindow& worker : window.workers) {
    pushes += worker.pushes;
    seconds += worker.push_seconds;
  }
  return pushes > 0 ? Fixed(seconds / pushes * 1e3, 1) : "";
}

}  // namespace bench
}  // namespace pstrain
