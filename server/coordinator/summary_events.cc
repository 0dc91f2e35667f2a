#include "server/coordinator/summary_events.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/checkpoint/file_path.h"
#include "common/summary/scalar_jsonl.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {
namespace {

// The records of <model_dir>/<folder>/scalars.jsonl; none when it is absent
// or unreadable.
std::vector<ScalarRecord> ReadScalars(Env& env, const std::string& model_dir,
                                      const std::string& folder) {
  const std::string path = JoinPath(JoinPath(model_dir, folder), std::string(kScalarJsonlFileName));
  ScalarJsonlReadOptions options;
  options.allow_truncated_tail = true;
  absl::StatusOr<std::vector<ScalarRecord>> records = ReadScalarJsonl(env, path, options);
  if (!records.ok()) {
    if (!absl::IsNotFound(records.status())) {
      LOG(WARNING) << "cannot read the curves of " << path << ": " << records.status();
    }
    return {};
  }
  return *std::move(records);
}

int64_t UnixMillis(double wall_time) { return static_cast<int64_t>(std::llround(wall_time * 1e3)); }

}  // namespace

std::vector<JobEvent> EventsFromSummaries(Env& env, const std::string& model_dir) {
  // By step: a step's scalars are written one after another, as one event.
  std::map<int64_t, JobEvent> progress;
  for (const ScalarRecord& record : ReadScalars(env, model_dir, "train")) {
    JobEvent& event = progress[record.step];
    event.set_unix_ms(std::max(event.unix_ms(), UnixMillis(record.wall_time)));
    ProgressEvent& point = *event.mutable_progress();
    point.set_global_step(record.step);
    if (record.tag == "loss") point.set_loss(record.value);
    if (record.tag == "learning_rate") point.set_learning_rate(record.value);
    if (record.tag == "examples_per_sec") point.set_examples_per_sec(record.value);
  }
  std::map<int64_t, JobEvent> evaluations;
  for (const ScalarRecord& record : ReadScalars(env, model_dir, "eval")) {
    JobEvent& event = evaluations[record.step];
    event.set_unix_ms(std::max(event.unix_ms(), UnixMillis(record.wall_time)));
    event.mutable_eval()->set_checkpoint_step(record.step);
    (*event.mutable_eval()->mutable_metrics())[record.tag] = record.value;
  }
  std::vector<JobEvent> events;
  events.reserve(progress.size() + evaluations.size());
  for (auto& [step, event] : progress) events.push_back(std::move(event));
  for (auto& [step, event] : evaluations) events.push_back(std::move(event));
  // In the order they happened; an evaluation comes after the training
  // step of its checkpoint.
  std::stable_sort(events.begin(), events.end(),
                   [](const JobEvent& a, const JobEvent& b) { return a.unix_ms() < b.unix_ms(); });
  return events;
}

}  // namespace coordinator
}  // namespace pstrain
