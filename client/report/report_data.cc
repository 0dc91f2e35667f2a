#include "client/report/report_data.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/export/export_manifest.h"
#include "common/export/export_versions.h"
#include "common/status/status_macros.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"
#include "google/protobuf/text_format.h"

namespace pstrain {
namespace {

// A job spec file is a few KiB; anything larger is not one.
constexpr int64_t kMaxSpecBytes = 1 << 20;

// Reads one scalars.jsonl into series; a note instead when it is missing
// or unreadable. Returns whether it was read.
bool ReadSeries(Env& env, const std::string& path, const std::string& missing_means,
                const std::vector<std::string>& preferred_tags, std::vector<ScalarSeries>* series,
                std::vector<std::string>* notes) {
  ScalarJsonlReadOptions options;
  options.allow_truncated_tail = true;  // its writer may be in the middle of a line
  absl::StatusOr<std::vector<ScalarRecord>> records = ReadScalarJsonl(env, path, options);
  if (absl::IsNotFound(records.status())) {
    notes->push_back(absl::StrCat(path, " is missing: ", missing_means));
    return false;
  }
  if (!records.ok()) {
    notes->push_back(absl::StrCat("cannot read ", path, ": ", records.status().message()));
    return false;
  }
  if (records->empty()) notes->push_back(absl::StrCat(path, " holds no values yet"));
  *series = GroupScalarSeries(*records, preferred_tags);
  for (const ScalarSeries& one : *series) {
    if (!one.non_finite.empty()) {
      notes->push_back(absl::StrCat(path, ": ", one.non_finite.size(), " non-finite value",
                                    one.non_finite.size() == 1 ? "" : "s", " of '", one.tag,
                                    "' skipped (first at step ", one.non_finite.front().step, ")"));
    }
  }
  return true;
}

std::string SpecText(const JobSpec& spec) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(spec, &text);
  return text;
}

absl::StatusOr<std::vector<CheckpointSummary>> SummarizeCheckpoints(Env& env,
                                                                    const std::string& model_dir,
                                                                    JobSpec* newest_spec) {
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> folders, ListCheckpointFolders(env, model_dir));
  std::vector<CheckpointSummary> summaries;
  for (const CheckpointRef& folder : folders) {
    CheckpointSummary summary;
    summary.step = folder.step;
    summary.path = folder.path;
    // Sizes only: a report should not read every byte of every checkpoint.
    VerifyOptions sizes_only;
    sizes_only.check_contents = false;
    absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, folder.path, sizes_only);
    if (manifest.ok()) {
      summary.final = manifest->final();
      summary.created_unix_ms = manifest->created_unix_ms();
      summary.num_shards = manifest->shards_size();
      for (const CheckpointShardFile& shard : manifest->shards()) summary.bytes += shard.bytes();
      if (manifest->has_spec()) *newest_spec = manifest->spec();
    } else {
      summary.problem = std::string(manifest.status().message());
    }
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

void SummarizeExports(Env& env, const std::string& export_dir, ReportData* data) {
  std::string newest_with_spec;
  for (const char* kind : {"best", "final"}) {
    const std::string parent = JoinPath(export_dir, kind);
    absl::StatusOr<std::vector<ExportVersion>> versions = ListExportVersions(env, parent);
    if (!versions.ok()) {
      data->notes.push_back(
          absl::StrCat("cannot list ", parent, ": ", versions.status().message()));
      continue;
    }
    for (const ExportVersion& version : *versions) {
      ExportSummary summary;
      summary.kind = kind;
      summary.step = version.step;
      summary.path = version.path;
      absl::StatusOr<ExportManifest> manifest = ReadExportManifest(env, version.path);
      if (manifest.ok()) {
        summary.metrics.insert(manifest->metrics().begin(), manifest->metrics().end());
        newest_with_spec = version.path;
      } else {
        data->notes.push_back(
            absl::StrCat("export ", version.path, ": ", manifest.status().message()));
      }
      data->exports.push_back(std::move(summary));
    }
  }
  if (data->job_spec_text.empty() && !newest_with_spec.empty()) {
    const std::string path = JoinPath(newest_with_spec, kExportSpecFileName);
    absl::StatusOr<std::string> text = ReadWholeFile(env, path, kMaxSpecBytes);
    if (text.ok()) {
      data->job_spec_text = *std::move(text);
      data->job_spec_source = path;
    } else {
      data->notes.push_back(absl::StrCat("cannot read ", path, ": ", text.status().message()));
    }
  }
}

}  // namespace

std::vector<std::string> TrainTagsInPlotOrder() {
  return {"loss", "learning_rate", "examples_per_sec", "global_step_per_sec"};
}

absl::StatusOr<ReportData> CollectReportData(Env& env, const std::string& model_dir) {
  ASSIGN_OR_RETURN(const bool exists, PathExists(env, model_dir));
  if (!exists) return absl::NotFoundError(absl::StrCat("model_dir ", model_dir, " does not exist"));
  ReportData data;
  data.model_dir = model_dir;
  const std::string train_path = JoinPath(TrainSummaryDir(model_dir), kScalarJsonlFileName);
  const std::string eval_path = JoinPath(EvalSummaryDir(model_dir), kScalarJsonlFileName);
  const bool has_train = ReadSeries(env, train_path, "no training curves", TrainTagsInPlotOrder(),
                                    &data.train, &data.notes);
  if (has_train) {
    for (const std::string& tag : TrainTagsInPlotOrder()) {
      if (tag == "global_step_per_sec") continue;  // shown when present, not expected
      bool found = false;
      for (const ScalarSeries& series : data.train) found = found || series.tag == tag;
      if (!found) data.notes.push_back(absl::StrCat(train_path, " holds no '", tag, "' values"));
    }
  }
  const bool has_eval = ReadSeries(env, eval_path, "no evaluation metrics (nothing evaluated yet?)",
                                   {}, &data.eval, &data.notes);

  JobSpec spec;
  ASSIGN_OR_RETURN(data.checkpoints, SummarizeCheckpoints(env, model_dir, &spec));
  for (auto it = data.checkpoints.rbegin(); it != data.checkpoints.rend(); ++it) {
    if (it->problem.empty()) {
      data.job_spec_text = SpecText(spec);
      data.job_spec_source = JoinPath(it->path, "MANIFEST");
      break;
    }
  }
  if (data.checkpoints.empty())
    data.notes.push_back(absl::StrCat(model_dir, " holds no checkpoints"));
  const std::string export_dir = spec.export_().export_dir().empty() ? JoinPath(model_dir, "export")
                                                                     : spec.export_().export_dir();
  SummarizeExports(env, export_dir, &data);
  if (data.job_spec_text.empty()) {
    data.notes.push_back("no job spec: no checkpoint MANIFEST or export holds one");
  }

  if (!has_train && !has_eval && data.checkpoints.empty() && data.exports.empty()) {
    return absl::NotFoundError(absl::StrCat("nothing to report in ", model_dir, ": no ", train_path,
                                            ", no ", eval_path, ", no checkpoints and no exports"));
  }
  return data;
}

}  // namespace pstrain
