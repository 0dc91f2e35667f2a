#include "common/checkpoint/manifest.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Field 9 (manifest_crc32c), wire type 5 (fixed32): (9 << 3) | 5.
constexpr char kChecksumTag = 0x4d;
constexpr size_t kChecksumFieldBytes = 5;

void AppendFixed32(uint32_t value, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t DecodeFixed32(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return value;
}

absl::Status CheckContent(const CheckpointManifest& manifest, absl::string_view file) {
  if (manifest.format_version() > kManifestFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(file, ": format version ", manifest.format_version(),
                     " is newer than this program reads (", kManifestFormatVersion, ")"));
  }
  if (manifest.format_version() < 1) {
    return absl::DataLossError(
        absl::StrCat(file, ": format version ", manifest.format_version(), " does not exist"));
  }
  if (manifest.global_step() < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": negative global step ", manifest.global_step()));
  }
  absl::flat_hash_set<std::string> names;
  // The shard files' sizes are summed (CheckpointInfoFromManifest): a total
  // past int64 would overflow there.
  int64_t total_bytes = 0;
  for (const CheckpointShardFile& shard : manifest.shards()) {
    if (!IsPlainFileName(shard.name()) || shard.name() == kManifestFileName) {
      return absl::DataLossError(absl::StrCat(file, ": shard file name \"",
                                              absl::CHexEscape(shard.name()),
                                              "\" is not a file name in the checkpoint folder"));
    }
    if (!names.insert(shard.name()).second) {
      return absl::DataLossError(
          absl::StrCat(file, ": shard file ", shard.name(), " is listed twice"));
    }
    if (shard.bytes() < 0) {
      return absl::DataLossError(
          absl::StrCat(file, ": shard file ", shard.name(), " has negative size ", shard.bytes()));
    }
    if (shard.bytes() > std::numeric_limits<int64_t>::max() - total_bytes) {
      return absl::DataLossError(absl::StrCat(file, ": the shard files together have more than ",
                                              std::numeric_limits<int64_t>::max(), " bytes"));
    }
    total_bytes += shard.bytes();
  }
  return absl::OkStatus();
}

}  // namespace

std::string SerializeManifest(const CheckpointManifest& manifest) {
  CheckpointManifest body = manifest;
  body.clear_manifest_crc32c();
  std::string bytes = body.SerializeAsString();
  const uint32_t masked = Crc32cMask(Crc32c(bytes));
  bytes.push_back(kChecksumTag);
  AppendFixed32(masked, &bytes);
  return bytes;
}

absl::StatusOr<CheckpointManifest> ParseManifest(absl::string_view bytes, absl::string_view file) {
  if (bytes.size() < kChecksumFieldBytes ||
      bytes[bytes.size() - kChecksumFieldBytes] != kChecksumTag) {
    return absl::DataLossError(absl::StrCat(
        file, ": ", bytes.size(), " bytes without the checksum that ends a MANIFEST (truncated?)"));
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - kChecksumFieldBytes);
  const uint32_t stored = Crc32cUnmask(DecodeFixed32(bytes.substr(body.size() + 1)));
  const uint32_t actual = Crc32c(body);
  if (stored != actual) {
    return absl::DataLossError(
        absl::StrFormat("%s: checksum mismatch: crc32c of the %d bytes is "
                        "0x%08x, the file says 0x%08x",
                        file, body.size(), actual, stored));
  }
  CheckpointManifest manifest;
  if (!manifest.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(absl::StrCat(file, ": not a CheckpointManifest"));
  }
  RETURN_IF_ERROR(CheckContent(manifest, file));
  return manifest;
}

absl::Status WriteManifest(Env& env, const std::string& checkpoint_dir,
                           const CheckpointManifest& manifest) {
  return WriteFileAtomically(env, JoinPath(checkpoint_dir, kManifestFileName),
                             SerializeManifest(manifest));
}

absl::StatusOr<CheckpointManifest> ReadManifest(Env& env, const std::string& checkpoint_dir) {
  const std::string path = JoinPath(checkpoint_dir, kManifestFileName);
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, path, kMaxManifestBytes);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(absl::StrCat(path, ": missing; the checkpoint was never completed"));
  }
  if (absl::IsResourceExhausted(bytes.status())) {
    return absl::DataLossError(bytes.status().message());
  }
  if (!bytes.ok()) return bytes.status();
  ASSIGN_OR_RETURN(CheckpointManifest manifest, ParseManifest(*bytes, path));
  const std::optional<int64_t> step = ParseCheckpointDirName(Basename(checkpoint_dir));
  if (step.has_value() && *step != manifest.global_step()) {
    return absl::DataLossError(absl::StrCat(path, ": global step ", manifest.global_step(),
                                            " differs from the folder's step ", *step));
  }
  return manifest;
}

CheckpointInfo CheckpointInfoFromManifest(const std::string& checkpoint_dir,
                                          const CheckpointManifest& manifest) {
  CheckpointInfo info;
  info.set_step(manifest.global_step());
  info.set_path(checkpoint_dir);
  info.set_created_unix_ms(manifest.created_unix_ms());
  int64_t bytes = 0;
  for (const CheckpointShardFile& shard : manifest.shards()) bytes += shard.bytes();
  info.set_bytes(bytes);
  info.set_final(manifest.final());
  return info;
}

}  // namespace pstrain
