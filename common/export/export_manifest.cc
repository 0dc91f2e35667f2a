#include "common/export/export_manifest.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Field 15 (manifest_crc32c), wire type 5 (fixed32): (15 << 3) | 5.
constexpr char kChecksumTag = 0x7d;
constexpr size_t kChecksumFieldBytes = 5;

uint32_t DecodeFixed32(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return value;
}

absl::Status CheckFile(const ExportedFile& entry, absl::string_view file,
                       absl::flat_hash_set<std::string>* names) {
  if (!IsPlainFileName(entry.name()) || entry.name() == kExportManifestFileName) {
    return absl::DataLossError(absl::StrCat(file, ": file name \"", absl::CHexEscape(entry.name()),
                                            "\" is not a file of the export folder"));
  }
  if (!names->insert(entry.name()).second) {
    return absl::DataLossError(absl::StrCat(file, ": file ", entry.name(), " is listed twice"));
  }
  if (entry.bytes() < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": file ", entry.name(), " has negative size ", entry.bytes()));
  }
  return absl::OkStatus();
}

absl::Status CheckContent(const ExportManifest& manifest, absl::string_view file) {
  if (manifest.format_version() > kExportFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(file, ": export format ", manifest.format_version(),
                     " is newer than this program reads (", kExportFormatVersion, ")"));
  }
  if (manifest.format_version() < 1) {
    return absl::DataLossError(
        absl::StrCat(file, ": export format ", manifest.format_version(), " does not exist"));
  }
  if (manifest.global_step() < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": negative global step ", manifest.global_step()));
  }
  absl::flat_hash_set<std::string> names;
  RETURN_IF_ERROR(CheckFile(manifest.spec_file(), file, &names));
  if (manifest.has_onnx_model()) RETURN_IF_ERROR(CheckFile(manifest.onnx_model(), file, &names));
  if (manifest.has_onnx_data()) RETURN_IF_ERROR(CheckFile(manifest.onnx_data(), file, &names));
  absl::flat_hash_set<std::string> variables;
  for (const ExportedVariable& variable : manifest.variables()) {
    if (!variables.insert(variable.name()).second) {
      return absl::DataLossError(
          absl::StrCat(file, ": variable ", variable.name(), " is listed twice"));
    }
    if (!variable.has_file()) {
      return absl::DataLossError(
          absl::StrCat(file, ": variable ", variable.name(), " names no file"));
    }
    RETURN_IF_ERROR(CheckFile(variable.file(), file, &names));
    if (variable.rows() < 0) {
      return absl::DataLossError(
          absl::StrCat(file, ": variable ", variable.name(), " has negative rows"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ExportVariableFileName(int index) { return absl::StrFormat("variable-%05d", index); }

std::string SerializeExportManifest(const ExportManifest& manifest) {
  ExportManifest body = manifest;
  body.clear_manifest_crc32c();
  std::string bytes = body.SerializeAsString();
  const uint32_t masked = Crc32cMask(Crc32c(bytes));
  bytes.push_back(kChecksumTag);
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((masked >> (8 * i)) & 0xff));
  return bytes;
}

absl::StatusOr<ExportManifest> ParseExportManifest(absl::string_view bytes,
                                                   absl::string_view file) {
  if (bytes.size() < kChecksumFieldBytes ||
      bytes[bytes.size() - kChecksumFieldBytes] != kChecksumTag) {
    return absl::DataLossError(absl::StrCat(file, " has no checksum at its end (", bytes.size(),
                                            " bytes): truncated or not a MANIFEST"));
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - kChecksumFieldBytes);
  const uint32_t stored = DecodeFixed32(bytes.substr(bytes.size() - 4));
  const uint32_t actual = Crc32cMask(Crc32c(body));
  if (stored != actual) {
    return absl::DataLossError(absl::StrFormat("%s fails its checksum (stored %08x, computed %08x)",
                                               file, stored, actual));
  }
  ExportManifest manifest;
  if (!manifest.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return absl::DataLossError(absl::StrCat(file, " does not parse as an export MANIFEST"));
  }
  RETURN_IF_ERROR(CheckContent(manifest, file));
  return manifest;
}

absl::StatusOr<ExportManifest> ReadExportManifest(Env& env, const std::string& export_dir) {
  const std::string path = JoinPath(export_dir, kExportManifestFileName);
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, path, kMaxExportManifestBytes);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(
        absl::StrCat(export_dir, " is not an exported model: it has no ", kExportManifestFileName));
  }
  if (absl::IsResourceExhausted(bytes.status())) {
    return absl::DataLossError(bytes.status().message());
  }
  if (!bytes.ok()) return bytes.status();
  return ParseExportManifest(*bytes, path);
}

}  // namespace pstrain
