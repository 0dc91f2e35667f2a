#include "common/export/onnx_export.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/export/checksummed_file.h"
#include "common/export/export_manifest.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// model.onnx.data: the pieces at their offsets, zeros between.
absl::StatusOr<ExportedFile> WriteExternalData(Env& env, const std::string& dir,
                                               const std::vector<OnnxExternalPiece>& pieces) {
  ASSIGN_OR_RETURN(ChecksummedFile file,
                   ChecksummedFile::Create(env, dir, std::string(kExportOnnxDataFileName)));
  const std::vector<char> zeros(4096, 0);
  for (const OnnxExternalPiece& piece : pieces) {
    while (file.bytes() < piece.offset) {
      const int64_t gap = std::min<int64_t>(piece.offset - file.bytes(), zeros.size());
      RETURN_IF_ERROR(file.Append(zeros.data(), gap));
    }
    RETURN_IF_ERROR(file.Append(piece.data, piece.bytes));
  }
  return file.Finish();
}

}  // namespace

absl::StatusOr<OnnxExportResult> WriteOnnxExport(Env& env, const std::string& dir,
                                                 const Model& model,
                                                 const ModelParameters& parameters,
                                                 const OnnxModelInfo& info,
                                                 const OnnxExportOptions& options) {
  OnnxExportResult result;
  OnnxModelBuilder builder(parameters);
  builder.SetDenseFeatures(info);
  // Whatever stops the description is the model's, not the export's:
  // the export goes on without an ONNX file and says why.
  if (absl::Status described = model.DescribeOnnx(builder); !described.ok()) {
    result.omitted = std::string(described.message());
    return result;
  }
  absl::StatusOr<BuiltOnnxModel> built = builder.Finish(info, options.max_inline_bytes);
  if (!built.ok()) {
    result.omitted = std::string(built.status().message());
    return result;
  }
  std::string bytes;
  if (!built->proto.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat("the ONNX model of ", info.model_name, " cannot be serialized"));
  }
  // The weights outside first: model.onnx is complete only once they are.
  if (!built->external.empty()) {
    ASSIGN_OR_RETURN(result.data, WriteExternalData(env, dir, built->external));
  }
  ASSIGN_OR_RETURN(ChecksummedFile file,
                   ChecksummedFile::Create(env, dir, std::string(kExportOnnxFileName)));
  RETURN_IF_ERROR(file.Append(bytes.data(), bytes.size()));
  ASSIGN_OR_RETURN(result.model, file.Finish());
  return result;
}

}  // namespace pstrain
