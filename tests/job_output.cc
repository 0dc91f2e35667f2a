#include "tests/job_output.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pstrain {
namespace testing_jobs {

std::vector<int64_t> ProgressSteps(const std::string& output, int64_t max_steps) {
  std::vector<int64_t> steps;
  const std::string limit = absl::StrCat("/", max_steps);
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&line, "step ")) continue;
    const size_t slash = line.find(limit);
    int64_t step;
    if (slash != absl::string_view::npos && absl::SimpleAtoi(line.substr(0, slash), &step)) {
      steps.push_back(step);
    }
  }
  return steps;
}

std::optional<int64_t> FinalStep(const std::string& output, absl::string_view state) {
  const std::string marker = absl::StrCat(" ", state, " at step ");
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::StartsWith(line, "job ")) continue;
    const size_t at = line.find(marker);
    if (at == absl::string_view::npos) continue;
    absl::string_view rest = line.substr(at + marker.size());
    int64_t step;
    if (absl::SimpleAtoi(rest.substr(0, rest.find(':')), &step)) return step;
  }
  return std::nullopt;
}

}  // namespace testing_jobs
}  // namespace pstrain
