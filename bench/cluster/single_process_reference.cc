#include "bench/cluster/single_process_reference.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "common/process/child_process.h"

namespace pstrain {
namespace bench {
namespace {

// The number after `"key": ` in a flat JSON object; false when absent.
bool JsonNumberField(absl::string_view json, absl::string_view key, double* value) {
  const std::string quoted = absl::StrCat("\"", key, "\": ");
  const size_t at = json.find(quoted);
  if (at == absl::string_view::npos) return false;
  absl::string_view rest = json.substr(at + quoted.size());
  return absl::SimpleAtod(rest.substr(0, rest.find_first_of(",}")), value);
}

}  // namespace

absl::StatusOr<SingleProcessRun> RunSingleProcess(const std::string& spec_text,
                                                  const std::string& spec_path,
                                                  const std::string& log_path, int64_t steps,
                                                  const std::string& bin_dir,
                                                  absl::Duration timeout) {
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", bin_dir);
  if (!pstrain.ok()) return pstrain.status();
  {
    std::ofstream spec(spec_path);
    spec << spec_text;
    if (!spec.good()) return absl::InternalError(absl::StrCat("cannot write ", spec_path));
  }
  std::remove(log_path.c_str());
  ChildProcessOptions options;
  options.program = *pstrain;
  options.args = {"train-local", spec_path, "--output=json", absl::StrCat("--max_steps=", steps)};
  options.log_path = log_path;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  if (!child.ok()) return child.status();
  absl::StatusOr<ExitStatus> exit = (*child)->Wait(timeout);
  if (!exit.ok()) {
    (*child)->Stop(absl::Seconds(5));
    return absl::DeadlineExceededError(absl::StrCat(
        "pstrain train-local did not finish ", steps, " steps within ",
        absl::FormatDuration(timeout), "; see ", log_path));
  }
  if (!exit->ok()) {
    return absl::InternalError(absl::StrCat("pstrain train-local ended with ", exit->ToString(),
                                            ":\n", TailOfFile(log_path, 10)));
  }
  std::ifstream log(log_path);
  std::stringstream text;
  text << log.rdbuf();
  for (absl::string_view line : absl::StrSplit(text.str(), '\n')) {
    if (line.empty() || line.front() != '{') continue;
    SingleProcessRun run;
    double global_step = 0;
    if (JsonNumberField(line, "examples_per_sec", &run.examples_per_sec) &&
        JsonNumberField(line, "train_seconds", &run.train_seconds) &&
        JsonNumberField(line, "global_step", &global_step)) {
      run.steps = static_cast<int64_t>(global_step);
      return run;
    }
  }
  return absl::InternalError(
      absl::StrCat("pstrain train-local printed no JSON result; see ", log_path));
}

}  // namespace bench
}  // namespace pstrain
