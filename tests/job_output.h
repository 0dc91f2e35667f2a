#ifndef PSTRAIN_TESTS_JOB_OUTPUT_H_
#define PSTRAIN_TESTS_JOB_OUTPUT_H_

// Reading what `pstrain watch` and `pstrain local` print about a job, for
// tests that check what a user relies on rather than which lines a
// throttled progress display happened to print.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace pstrain {
namespace testing_jobs {

// The steps of the plain progress lines ("step N/max_steps ...") in
// `output`, in the order printed.
std::vector<int64_t> ProgressSteps(const std::string& output, int64_t max_steps);

// The step of the job's final line ("job ID <state> at step N: ..."), if
// `output` has one in `state` (e.g. "SUCCEEDED").
std::optional<int64_t> FinalStep(const std::string& output, absl::string_view state);

}  // namespace testing_jobs
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_JOB_OUTPUT_H_
