#ifndef PSTRAIN_BENCH_SIM_SIM_REPORT_H_
#define PSTRAIN_BENCH_SIM_SIM_REPORT_H_

#include <string>

#include "bench/report/markdown_report.h"
#include "bench/sim/sim_figures.h"

namespace pstrain {
namespace bench {

// The sim benchmark's section of bench/RESULTS.md: the coordinator at each
// member count beside its figures at the first (smallest) count, what broke
// first, and the shard at each pusher count beside one pusher of the same
// kind. States no targets: the simulator has none.
MarkdownReport SimReport(const SimRun& run);

// What broke first over the run's coordinator points, as a sentence:
// "Nothing broke up to 1000 members." or "At 10000 members: ...".
std::string FirstBreak(const SimRun& run);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_REPORT_H_
