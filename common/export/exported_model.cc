#include "common/export/exported_model.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/export/export_manifest.h"
#include "common/export/export_versions.h"
#include "common/export/export_writer.h"
#include "common/model/model_factory.h"
#include "common/status/status_macros.h"
#include "google/protobuf/text_format.h"

namespace pstrain {
namespace {

// Reads `entry` of the export at `dir` and checks it against the MANIFEST.
absl::StatusOr<std::string> ReadListedFile(Env& env, const std::string& dir,
                                           const ExportedFile& entry) {
  const std::string path = JoinPath(dir, entry.name());
  absl::StatusOr<FileInfo> info = env.Stat(path);
  if (absl::IsNotFound(info.status())) {
    return absl::DataLossError(absl::StrCat(path, " is missing; the export's MANIFEST lists it"));
  }
  if (!info.ok()) return info.status();
  if (info->is_directory || info->size != entry.bytes()) {
    return absl::DataLossError(absl::StrCat(path, " has ", info->is_directory ? 0 : info->size,
                                            " bytes; the MANIFEST says ", entry.bytes()));
  }
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, path, entry.bytes());
  if (absl::IsResourceExhausted(bytes.status())) {
    return absl::DataLossError(absl::StrCat(path, " grew while it was read"));
  }
  if (!bytes.ok()) return bytes.status();
  if (static_cast<int64_t>(bytes->size()) != entry.bytes()) {
    return absl::DataLossError(
        absl::StrCat(path, " has ", bytes->size(), " bytes; the MANIFEST says ", entry.bytes()));
  }
  const uint32_t crc = Crc32c(*bytes);
  if (crc != entry.crc32c()) {
    return absl::DataLossError(absl::StrCat(path, " fails its CRC32C (", crc,
                                            ", the MANIFEST says ", entry.crc32c(),
                                            "): the export is damaged"));
  }
  return bytes;
}

std::string DimsString(const google::protobuf::RepeatedField<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Checks that the variables the model declares are those the export holds.
absl::Status CheckVariables(const std::vector<VariableDef>& defs, const ExportManifest& manifest,
                            const std::string& dir) {
  auto mismatch = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat("the model built from the spec of ", dir,
                                                      " does not fit its weights: ", what));
  };
  if (defs.size() != static_cast<size_t>(manifest.variables_size())) {
    return mismatch(absl::StrCat("the model has ", defs.size(), " variables, the export ",
                                 manifest.variables_size()));
  }
  for (size_t i = 0; i < defs.size(); ++i) {
    const VariableSpec& spec = defs[i].spec;
    const ExportedVariable& stored = manifest.variables(static_cast<int>(i));
    if (spec.name() != stored.name()) {
      return mismatch(absl::StrCat("variable ", i, " is ", spec.name(), " in the model, ",
                                   stored.name(), " in the export"));
    }
    const bool embedding = spec.kind() == VARIABLE_KIND_EMBEDDING;
    if (embedding != stored.embedding() ||
        DimsString(spec.shape().dims()) != DimsString(stored.dims())) {
      return mismatch(absl::StrCat(
          "variable ", spec.name(), " is ", embedding ? "a table " : "dense ",
          DimsString(spec.shape().dims()), " in the model, ",
          stored.embedding() ? "a table " : "dense ", DimsString(stored.dims()), " in the export"));
    }
  }
  return absl::OkStatus();
}

absl::Status DecodeVariable(const std::string& path, const std::string& bytes,
                            const ExportedVariable& stored, ModelParameters& parameters) {
  if (!stored.embedding()) {
    Tensor* value = parameters.mutable_dense(stored.name());
    if (value == nullptr) return absl::InternalError(absl::StrCat("no variable ", stored.name()));
    if (bytes.size() != value->num_bytes()) {
      return absl::DataLossError(absl::StrCat(path, " holds ", bytes.size(), " bytes; variable ",
                                              stored.name(), " needs ", value->num_bytes()));
    }
    std::memcpy(value->raw_data(), bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  EmbeddingTableValues* table = parameters.mutable_table(stored.name());
  if (table == nullptr) return absl::InternalError(absl::StrCat("no table ", stored.name()));
  const size_t row_bytes = sizeof(int64_t) + table->dim() * sizeof(float);
  if (bytes.size() != static_cast<size_t>(stored.rows()) * row_bytes) {
    return absl::DataLossError(absl::StrCat(path, " holds ", bytes.size(), " bytes, not ",
                                            stored.rows(), " rows of ", row_bytes));
  }
  std::vector<float> row(table->dim());
  for (int64_t r = 0; r < stored.rows(); ++r) {
    const char* at = bytes.data() + r * row_bytes;
    int64_t id;
    std::memcpy(&id, at, sizeof(id));
    std::memcpy(row.data(), at + sizeof(id), row.size() * sizeof(float));
    if (absl::Status set = table->Set(id, row); !set.ok()) {
      return absl::DataLossError(absl::StrCat(path, ": ", set.message()));
    }
  }
  return absl::OkStatus();
}

// The export folder `dir` names: itself, or its newest version.
absl::StatusOr<std::string> ResolveExportDir(Env& env, const std::string& dir) {
  ASSIGN_OR_RETURN(const bool direct, PathExists(env, JoinPath(dir, kExportManifestFileName)));
  if (direct) return dir;
  ASSIGN_OR_RETURN(const std::vector<ExportVersion> versions, ListExportVersions(env, dir));
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("no exported model at ", dir, ": neither a ",
                                            kExportManifestFileName,
                                            " nor a version folder <step>/ holding one"));
  }
  return versions.back().path;
}

}  // namespace

absl::StatusOr<std::vector<float>> ExportedModel::Predict(const ExampleBatch& batch) {
  const ExampleBatch* input = &batch;
  ExampleBatch labelled;
  if (batch.labels.empty() && batch.size > 0) {
    // The loss head wants labels; any valid class serves, the loss is dropped.
    labelled.size = batch.size;
    labelled.dense = batch.dense.Clone();
    labelled.sparse_ids = batch.sparse_ids;
    labelled.sparse_values = batch.sparse_values;
    labelled.row_splits = batch.row_splits;
    labelled.labels.assign(batch.size, 0.0f);
    input = &labelled;
  }
  ASSIGN_OR_RETURN(RowIds rows, model_->RowsToRead(*input));
  RETURN_IF_ERROR(parameters_->PrepareView(rows, &view_));
  RETURN_IF_ERROR(model_->Forward(view_, *input, PassMode::kEval, &output_));
  return output_.predictions;
}

absl::StatusOr<std::unique_ptr<ExportedModel>> LoadExportedModel(Env& env, const std::string& dir,
                                                                 const LoadExportOptions& options) {
  std::unique_ptr<ExportedModel> loaded(new ExportedModel());
  ASSIGN_OR_RETURN(loaded->path_, ResolveExportDir(env, dir));
  const std::string& path = loaded->path_;
  ASSIGN_OR_RETURN(loaded->manifest_, ReadExportManifest(env, path));
  const ExportManifest& manifest = loaded->manifest_;

  ASSIGN_OR_RETURN(const std::string spec_text, ReadListedFile(env, path, manifest.spec_file()));
  if (!google::protobuf::TextFormat::ParseFromString(spec_text, &loaded->spec_)) {
    return absl::DataLossError(
        absl::StrCat(JoinPath(path, manifest.spec_file().name()), " does not parse as a JobSpec"));
  }
  loaded->dataset_ = FromExportedDatasetInfo(manifest.dataset());
  if (manifest.has_imported_graph()) {
    // Checked whole here; the model reads it again, from the export.
    RETURN_IF_ERROR(ReadListedFile(env, path, manifest.imported_graph()).status());
    if (manifest.has_imported_data()) {
      RETURN_IF_ERROR(ReadListedFile(env, path, manifest.imported_data()).status());
    }
    loaded->spec_.mutable_model()->mutable_onnx()->set_path(
        JoinPath(path, manifest.imported_graph().name()));
  }

  ComputeOptions compute;
  compute.num_threads = options.compute_threads;
  ASSIGN_OR_RETURN(loaded->compute_, ComputeContext::Create(compute));
  ModelContext context;
  context.compute = loaded->compute_.get();
  context.seed = loaded->spec_.training().seed();
  ASSIGN_OR_RETURN(loaded->model_, CreateModel(loaded->spec_.model(), loaded->dataset_, context));
  const std::vector<VariableDef> defs = loaded->model_->Variables();
  RETURN_IF_ERROR(CheckVariables(defs, manifest, path));
  ASSIGN_OR_RETURN(
      loaded->parameters_,
      ModelParameters::Create(defs, loaded->spec_.training().seed(), options.unstored_rows));
  for (const ExportedVariable& stored : manifest.variables()) {
    ASSIGN_OR_RETURN(const std::string bytes, ReadListedFile(env, path, stored.file()));
    RETURN_IF_ERROR(
        DecodeVariable(JoinPath(path, stored.file().name()), bytes, stored, *loaded->parameters_));
  }
  return loaded;
}

absl::StatusOr<std::unique_ptr<ExportedModel>> LoadExportedModel(const std::string& dir,
                                                                 const LoadExportOptions& options) {
  PosixEnv env;
  return LoadExportedModel(env, dir, options);
}

}  // namespace pstrain
