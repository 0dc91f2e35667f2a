#ifndef PSTRAIN_BENCH_SIM_SIM_REPORT_H_
#define PSTRAIN_BENCH_SIM_SIM_REPORT_H_

#include <string>

#include "bench/report/markdown_report.h"
#include "bench/sim/sim_figures.h"

namespace pstrain {
namespace bench {

// The title of the sim benchmark's section of bench/RESULTS.md.
inline constexpr char kSimReportTitle[] =
    "sim: many light members against a real coordinator and shard";

// Adds the sim benchmark's section to `report` (made with kSimReportTitle
// when the run began, so that its load average at the start is the run's):
// the coordinator at each member count beside its figures at the first
// (smallest) count, what broke first, and the shard at each pusher count
// beside one pusher of the same kind. States no targets: the simulator has
// none.
void AddSimReport(const SimRun& run, MarkdownReport* report);

// What broke first over the run's coordinator points, as a sentence:
// "Nothing broke up to 1000 members." or "At 10000 members: ...".
std::string FirstBreak(const SimRun& run);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_REPORT_H_
