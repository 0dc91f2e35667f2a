#ifndef PSTRAIN_COMMON_EXPORT_EXPORT_MANIFEST_H_
#define PSTRAIN_COMMON_EXPORT_EXPORT_MANIFEST_H_

// The files of an exported model folder and its MANIFEST:
//
//   <export>/
//     job_spec.pbtxt         the JobSpec, defaults filled, as text format
//     variable-00000         one file per variable, independent of sharding
//     variable-00001           (layouts in common/export/export_manifest.proto)
//     model.onnx             the model as ONNX, when it has an ONNX description
//     model.onnx.data        its largest weights, when too large for one protobuf
//     imported.onnx          an imported model's graph, as it was trained from
//     imported.onnx.data     its tensors, when it kept them in external files
//     MANIFEST               written last; sizes and CRC32C of every file
//
// The MANIFEST is a binary ExportManifest whose last field, manifest_crc32c,
// is the masked CRC32C of every byte before it. Thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "common/export/export_manifest.pb.h"

namespace pstrain {

inline constexpr int32_t kExportFormatVersion = 1;
inline constexpr absl::string_view kExportManifestFileName = "MANIFEST";
inline constexpr absl::string_view kExportSpecFileName = "job_spec.pbtxt";
inline constexpr absl::string_view kExportOnnxFileName = "model.onnx";
inline constexpr absl::string_view kExportOnnxDataFileName = "model.onnx.data";
inline constexpr absl::string_view kExportImportedGraphFileName = "imported.onnx";
inline constexpr absl::string_view kExportImportedDataFileName = "imported.onnx.data";
// The largest ONNX file protobuf parses (one message under 2 GiB).
inline constexpr int64_t kMaxImportedGraphBytes = (int64_t{1} << 31) - 1;
// A MANIFEST lists files and metrics; anything larger is damaged.
inline constexpr int64_t kMaxExportManifestBytes = 16 << 20;

// "variable-<index>", five digits or more.
std::string ExportVariableFileName(int index);

// The MANIFEST's bytes: `manifest` (whatever its manifest_crc32c) followed
// by its checksum field.
std::string SerializeExportManifest(const ExportManifest& manifest);

// Parses and checks a MANIFEST's bytes; `file` names it in messages.
// DataLoss: the checksum is missing or wrong, the bytes do not parse, or the
//   content is impossible (a file name that is not a plain name or appears
//   twice, a negative size, a variable without a file).
// FailedPrecondition: a newer format than kExportFormatVersion.
absl::StatusOr<ExportManifest> ParseExportManifest(absl::string_view bytes, absl::string_view file);

// Reads and checks export_dir/MANIFEST (not the files it lists).
// NotFound: no MANIFEST: not an export, or one never completed.
// DataLoss, FailedPrecondition: as ParseExportManifest.
absl::StatusOr<ExportManifest> ReadExportManifest(Env& env, const std::string& export_dir);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_EXPORT_MANIFEST_H_
