#include "bench/sparse/single_process_reference.h"

#include <algorithm>
#include <fstream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/sparse/process_cpu.h"
#include "bench/sparse/resident_memory.h"
#include "client/local_cluster.h"
#include "common/process/child_process.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
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

absl::StatusOr<SingleProcessFigures> RunSingleProcess(const std::string& pstrain_path,
                                                      const std::string& spec_path,
                                                      const std::string& log_path,
                                                      absl::Duration timeout) {
  ChildProcessOptions options;
  options.program = pstrain_path;
  options.args = {"train-local", spec_path, "--output=json"};
  options.log_path = log_path;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  if (!child.ok()) return child.status();

  SingleProcessFigures figures;
  const absl::Time give_up = absl::Now() + timeout;
  std::optional<ExitStatus> exit;
  while (!(exit = (*child)->Poll()).has_value()) {
    if (absl::Now() > give_up) {
      (*child)->Stop(absl::Seconds(5));
      return absl::DeadlineExceededError(
          absl::StrCat("pstrain train-local still ran after ", absl::FormatDuration(timeout)));
    }
    figures.peak_rss_bytes =
        std::max(figures.peak_rss_bytes, ResidentBytes((*child)->pid()).value_or(0));
    figures.cpu_seconds = std::max(figures.cpu_seconds, CpuSeconds((*child)->pid()).value_or(0));
    absl::SleepFor(absl::Milliseconds(250));
  }
  if (!exit->ok()) return Failed(absl::StrCat("ended with ", exit->ToString()), log_path);

  google::protobuf::Struct answer;
  const std::string json = LastJsonLine(log_path);
  if (json.empty() || !google::protobuf::util::JsonStringToMessage(json, &answer).ok()) {
    return Failed("printed no JSON object", log_path);
  }
  const auto& fields = answer.fields();
  for (const char* key : {"examples_per_sec", "examples", "train_seconds"}) {
    if (!fields.contains(key)) return Failed(absl::StrCat("printed no ", key), log_path);
  }
  figures.examples_per_sec = fields.at("examples_per_sec").number_value();
  figures.examples = static_cast<int64_t>(fields.at("examples").number_value());
  figures.train_seconds = fields.at("train_seconds").number_value();
  return figures;
}

}  // namespace pstrain
