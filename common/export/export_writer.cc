#include "common/export/export_writer.h"

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/export/checksummed_file.h"
#include "common/export/export_manifest.h"
#include "common/onnx/onnx_external_data.h"
#include "common/onnx/onnx_file.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "google/protobuf/text_format.h"

#if !defined(ABSL_IS_LITTLE_ENDIAN)
#error "export files are little-endian; this build writes them as raw memory"
#endif

namespace pstrain {
namespace {

absl::Status WriteVariable(Env& env, const std::string& dir, int index, const VariableDef& def,
                           const ModelParameters& parameters, ExportedVariable* entry) {
  const std::string& name = def.spec.name();
  entry->set_name(name);
  for (int64_t d : def.spec.shape().dims()) entry->add_dims(d);
  ASSIGN_OR_RETURN(ChecksummedFile file,
                   ChecksummedFile::Create(env, dir, ExportVariableFileName(index)));
  if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
    const EmbeddingTableValues* table = parameters.table(name);
    if (table == nullptr) return absl::InternalError(absl::StrCat("no table ", name));
    entry->set_embedding(true);
    const std::vector<int64_t> ids = table->SortedIds();
    entry->set_rows(static_cast<int64_t>(ids.size()));
    for (int64_t id : ids) {
      RETURN_IF_ERROR(file.Append(&id, sizeof(id)));
      RETURN_IF_ERROR(file.Append(table->Find(id), table->dim() * sizeof(float)));
    }
  } else {
    const Tensor* value = parameters.dense(name);
    if (value == nullptr) return absl::InternalError(absl::StrCat("no dense variable ", name));
    RETURN_IF_ERROR(file.Append(value->raw_data(), value->num_bytes()));
  }
  ASSIGN_OR_RETURN(*entry->mutable_file(), file.Finish());
  return absl::OkStatus();
}

// The tensors of `graph` that keep their data in external files: its
// initializers and its nodes' tensor attributes (Constant's value).
std::vector<onnx::TensorProto*> ExternalTensors(onnx::GraphProto& graph) {
  std::vector<onnx::TensorProto*> tensors;
  auto add = [&](onnx::TensorProto* tensor) {
    if (tensor->data_location() == onnx::TensorProto::EXTERNAL) tensors.push_back(tensor);
  };
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) add(&tensor);
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) add(attribute.mutable_t());
    }
  }
  return tensors;
}

// Moves the external data of `graph`, read from `source_folder`, into
// imported.onnx.data in the export, pointing its tensors there.
absl::Status GatherExternalData(Env& env, const std::string& dir, const std::string& source_folder,
                                std::vector<onnx::TensorProto*> tensors, ExportManifest* manifest) {
  ASSIGN_OR_RETURN(ChecksummedFile data,
                   ChecksummedFile::Create(env, dir, std::string(kExportImportedDataFileName)));
  for (onnx::TensorProto* tensor : tensors) {
    ASSIGN_OR_RETURN(const OnnxValue value,
                     DecodeOnnxTensor(*tensor, tensor->name(), source_folder));
    const int64_t offset = data.bytes();
    if (value.is_int64) {
      RETURN_IF_ERROR(data.Append(value.ints.data(), value.ints.size() * sizeof(int64_t)));
    } else {
      RETURN_IF_ERROR(data.Append(value.floats.data(), value.floats.size() * sizeof(float)));
    }
    SetOnnxExternalLocation(
        {std::string(kExportImportedDataFileName), offset, data.bytes() - offset}, tensor);
  }
  ASSIGN_OR_RETURN(*manifest->mutable_imported_data(), data.Finish());
  return absl::OkStatus();
}

// The graph an imported model was built from, copied into the export as it
// is, or with its external data gathered into one file beside it.
absl::Status CopyImportedGraph(Env& env, const std::string& dir, const ModelSpec& model,
                               ExportManifest* manifest) {
  if (!model.has_onnx()) return absl::OkStatus();
  const std::string& source = model.onnx().path();
  auto cannot_copy = [](const absl::Status& status) {
    return absl::Status(status.code(),
                        absl::StrCat("the imported graph the model was trained from "
                                     "(model.onnx.path) cannot be copied into the export: ",
                                     status.message()));
  };
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, source, kMaxImportedGraphBytes);
  if (!bytes.ok()) return cannot_copy(bytes.status());
  absl::StatusOr<onnx::ModelProto> graph = ParseOnnxModel(*bytes, source);
  if (!graph.ok()) return cannot_copy(graph.status());
  std::vector<onnx::TensorProto*> external = ExternalTensors(*graph->mutable_graph());
  if (!external.empty()) {
    absl::Status gathered =
        GatherExternalData(env, dir, Dirname(source), std::move(external), manifest);
    if (!gathered.ok()) return cannot_copy(gathered);
    *bytes = graph->SerializeAsString();
  }
  ASSIGN_OR_RETURN(ChecksummedFile file,
                   ChecksummedFile::Create(env, dir, std::string(kExportImportedGraphFileName)));
  RETURN_IF_ERROR(file.Append(bytes->data(), bytes->size()));
  ASSIGN_OR_RETURN(*manifest->mutable_imported_graph(), file.Finish());
  return absl::OkStatus();
}

// model.onnx and its data, or why there is none.
absl::Status WriteOnnx(Env& env, const std::string& dir, const ExportSource& source,
                       const Model& model, const ModelParameters& parameters,
                       const OnnxExportOptions& options, ExportManifest* manifest) {
  OnnxModelInfo info;
  info.model_name = model.name();
  info.prediction_kind = model.prediction_kind();
  info.prediction_width = model.prediction_width();
  info.global_step = source.global_step;
  info.job_id = source.job_id;
  info.dense_names = source.dataset.dense_names;
  info.dense_fill = source.dataset.dense_fill;
  info.dense_mean = source.dataset.dense_mean;
  info.dense_scale = source.dataset.dense_scale;
  ASSIGN_OR_RETURN(OnnxExportResult onnx,
                   WriteOnnxExport(env, dir, model, parameters, info, options));
  if (onnx.model) *manifest->mutable_onnx_model() = *onnx.model;
  if (onnx.data) *manifest->mutable_onnx_data() = *onnx.data;
  if (!onnx.omitted.empty()) {
    LOG(WARNING) << "the export of step " << source.global_step << " holds no "
                 << kExportOnnxFileName << ": " << onnx.omitted;
    manifest->set_onnx_omitted(onnx.omitted);
  }
  return absl::OkStatus();
}

absl::StatusOr<ExportManifest> WriteContents(Env& env, const std::string& dir,
                                             const ExportSource& source, const Model& model,
                                             const ModelParameters& parameters,
                                             const OnnxExportOptions& onnx) {
  ExportManifest manifest;
  manifest.set_format_version(kExportFormatVersion);
  manifest.set_global_step(source.global_step);
  manifest.set_job_id(source.job_id);
  manifest.set_created_unix_ms(absl::ToUnixMillis(env.Now()));
  manifest.set_source_checkpoint(source.source_checkpoint);
  *manifest.mutable_dataset() = ToExportedDatasetInfo(source.dataset);
  for (const auto& [name, value] : source.metrics) (*manifest.mutable_metrics())[name] = value;

  std::string spec_text;
  if (!google::protobuf::TextFormat::PrintToString(source.spec, &spec_text)) {
    return absl::InternalError("the job spec cannot be printed as text");
  }
  ASSIGN_OR_RETURN(ChecksummedFile spec_file,
                   ChecksummedFile::Create(env, dir, std::string(kExportSpecFileName)));
  RETURN_IF_ERROR(spec_file.Append(spec_text.data(), spec_text.size()));
  ASSIGN_OR_RETURN(*manifest.mutable_spec_file(), spec_file.Finish());
  RETURN_IF_ERROR(CopyImportedGraph(env, dir, source.spec.model(), &manifest));

  const std::vector<VariableDef>& defs = parameters.definitions();
  for (int i = 0; i < static_cast<int>(defs.size()); ++i) {
    RETURN_IF_ERROR(WriteVariable(env, dir, i, defs[i], parameters, manifest.add_variables()));
  }
  RETURN_IF_ERROR(WriteOnnx(env, dir, source, model, parameters, onnx, &manifest));

  ASSIGN_OR_RETURN(ChecksummedFile manifest_file,
                   ChecksummedFile::Create(env, dir, std::string(kExportManifestFileName)));
  const std::string bytes = SerializeExportManifest(manifest);
  RETURN_IF_ERROR(manifest_file.Append(bytes.data(), bytes.size()));
  RETURN_IF_ERROR(manifest_file.Finish().status());
  RETURN_IF_ERROR(env.SyncDir(dir));
  return ParseExportManifest(bytes, JoinPath(dir, kExportManifestFileName));
}

}  // namespace

ExportedDatasetInfo ToExportedDatasetInfo(const DatasetInfo& info) {
  ExportedDatasetInfo out;
  out.set_dense_dim(info.dense_dim);
  out.set_image_height(info.image_height);
  out.set_image_width(info.image_width);
  out.set_image_channels(info.image_channels);
  out.set_sparse_dim(info.sparse_dim);
  out.set_num_fields(info.num_fields);
  out.set_num_classes(info.num_classes);
  for (const std::string& name : info.dense_names) out.add_dense_names(name);
  for (float fill : info.dense_fill) out.add_dense_fill(fill);
  for (float mean : info.dense_mean) out.add_dense_mean(mean);
  for (float scale : info.dense_scale) out.add_dense_scale(scale);
  return out;
}

DatasetInfo FromExportedDatasetInfo(const ExportedDatasetInfo& info) {
  DatasetInfo out;
  out.dense_dim = info.dense_dim();
  out.image_height = info.image_height();
  out.image_width = info.image_width();
  out.image_channels = info.image_channels();
  out.sparse_dim = info.sparse_dim();
  out.num_fields = info.num_fields();
  out.num_classes = info.num_classes();
  out.dense_names.assign(info.dense_names().begin(), info.dense_names().end());
  out.dense_fill.assign(info.dense_fill().begin(), info.dense_fill().end());
  out.dense_mean.assign(info.dense_mean().begin(), info.dense_mean().end());
  out.dense_scale.assign(info.dense_scale().begin(), info.dense_scale().end());
  return out;
}

absl::StatusOr<ExportManifest> WriteExport(Env& env, const std::string& dir,
                                           const ExportSource& source, const Model& model,
                                           const ModelParameters& parameters,
                                           const OnnxExportOptions& onnx) {
  if (dir.empty() || Basename(dir).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("export folder '", dir, "' is not a folder name"));
  }
  if (source.global_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative global step ", source.global_step));
  }
  ASSIGN_OR_RETURN(const bool exists, PathExists(env, dir));
  if (exists) return absl::AlreadyExistsError(absl::StrCat("export ", dir, " already exists"));
  const std::string parent = Dirname(dir);
  RETURN_IF_ERROR(CreateDirs(env, parent));
  const std::string temporary = dir + ".tmp";
  ASSIGN_OR_RETURN(const bool stale, PathExists(env, temporary));
  if (stale) RETURN_IF_ERROR(RemoveTree(env, temporary));
  RETURN_IF_ERROR(env.CreateDir(temporary));

  absl::StatusOr<ExportManifest> manifest =
      WriteContents(env, temporary, source, model, parameters, onnx);
  absl::Status status = manifest.status();
  if (status.ok()) status = env.Rename(temporary, dir);
  if (!status.ok()) {
    if (absl::Status removed = RemoveTree(env, temporary);
        !removed.ok() && !absl::IsNotFound(removed)) {
      LOG(WARNING) << "cannot remove the unfinished export " << temporary << ": " << removed;
    }
    return status;
  }
  RETURN_IF_ERROR(env.SyncDir(parent));
  return manifest;
}

}  // namespace pstrain
