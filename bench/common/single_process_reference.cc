#include "bench/common/single_process_reference.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/common/process_cpu.h"
#include "bench/common/resident_memory.h"
#include "client/local_cluster.h"
#include "common/process/child_process.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace bench {
namespace {

// The last line of the log that is a JSON object: train-local's answer
// (its progress lines on stderr are not).
std::string LastJsonLine(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "{")) last = line;
  }
  return last;
}

absl::Status Failed(const std::string& what, const std::string& log_path) {
  return absl::InternalError(absl::StrCat("pstrain train-local ", what, "; end of its log (",
                                          log_path, "):\n", TailOfFile(log_path, 15)));
}

}  // namespace

absl::StatusOr<SingleProcessRun> RunSingleProcess(const std::string& pstrain_path,
                                                  const std::string& spec_path,
                                                  const std::vector<std::string>& extra_args,
                                                  const std::string& log_path,
                                                  absl::Duration timeout) {
  // The log is appended to: an answer left by an earlier run must not be
  // read as this one's.
  std::remove(log_path.c_str());
  ChildProcessOptions options;
  options.program = pstrain_path;
  options.args = {"train-local", spec_path, "--output=json"};
  options.args.insert(options.args.end(), extra_args.begin(), extra_args.end());
  options.log_path = log_path;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  if (!child.ok()) return child.status();

  SingleProcessRun run;
  const absl::Time give_up = absl::Now() + timeout;
  std::optional<ExitStatus> exit;
  while (!(exit = (*child)->Poll()).has_value()) {
    if (absl::Now() > give_up) {
      (*child)->Stop(absl::Seconds(5));
      return absl::DeadlineExceededError(absl::StrCat("pstrain train-local still ran after ",
                                                      absl::FormatDuration(timeout), "; see ",
                                                      log_path));
    }
    run.peak_rss_bytes = std::max(run.peak_rss_bytes, ResidentBytes((*child)->pid()).value_or(0));
    run.cpu_seconds = std::max(run.cpu_seconds, CpuSeconds((*child)->pid()).value_or(0));
    absl::SleepFor(absl::Milliseconds(250));
  }
  if (!exit->ok()) return Failed(absl::StrCat("ended with ", exit->ToString()), log_path);

  google::protobuf::Struct answer;
  const std::string json = LastJsonLine(log_path);
  if (json.empty() || !google::protobuf::util::JsonStringToMessage(json, &answer).ok()) {
    return Failed("printed no JSON object", log_path);
  }
  const auto& fields = answer.fields();
  for (const char* key : {"examples_per_sec", "examples", "train_seconds", "global_step"}) {
    if (!fields.contains(key)) return Failed(absl::StrCat("printed no ", key), log_path);
  }
  run.examples_per_sec = fields.at("examples_per_sec").number_value();
  run.examples = static_cast<int64_t>(fields.at("examples").number_value());
  run.train_seconds = fields.at("train_seconds").number_value();
  run.steps = static_cast<int64_t>(fields.at("global_step").number_value());
  return run;
}

}  // namespace bench
}  // namespace pstrain
