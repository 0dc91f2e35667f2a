// Fuzzes the checkpoint reader: the bytes as a MANIFEST, as a shard file and
// as the `checkpoint` pointer, each read as a restore reads it (from an
// in-memory filesystem). MANIFEST and shard-file checksums are also made
// right (checksum_fixup.h) so that the decoding behind them is reached.
// Every read must end in a status; one that succeeds must describe a
// checkpoint its accessors can read entirely.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/shard_file.h"
#include "glog/logging.h"
#include "tests/fuzz/checksum_fixup.h"
#include "common/checkpoint/memory_env.h"
#include "tests/fuzz/quiet_logs.h"

namespace pstrain {
namespace {

constexpr char kModelDir[] = "/model";

void ReadAsManifest(const std::string& bytes) {
  absl::StatusOr<CheckpointManifest> manifest = ParseManifest(bytes, "MANIFEST");
  if (!manifest.ok()) {
    CHECK(absl::IsDataLoss(manifest.status()) || absl::IsFailedPrecondition(manifest.status()))
        << manifest.status();
    return;
  }
  const CheckpointInfo info = CheckpointInfoFromManifest("/model/ckpt-1", *manifest);
  CHECK_GE(info.bytes(), 0) << "a checkpoint of negative size";

  // The same MANIFEST in its folder, as a restore finds it: the shard files
  // it lists are missing, so the search must skip it, saying so.
  MemoryEnv env;
  const std::string dir = JoinPath(kModelDir, CheckpointDirName(manifest->global_step()));
  env.PutFile(JoinPath(dir, kManifestFileName), bytes);
  absl::StatusOr<CheckpointManifest> read = ReadManifest(env, dir);
  CHECK(read.ok()) << read.status();
  absl::StatusOr<RestorableCheckpointSearch> search = FindRestorableCheckpoint(env, kModelDir);
  CHECK(search.ok()) << search.status();
  if (manifest->shards_size() > 0) {
    CHECK(!search->checkpoint.has_value()) << "a checkpoint without its shard files verified";
    CHECK_EQ(search->skipped.size(), 1u);
  }
}

void ReadAsShardFile(const std::string& bytes) {
  MemoryEnv env;
  const std::string path = "/model/ckpt-1/shard-0-of-1";
  env.PutFile(path, bytes);
  absl::StatusOr<std::unique_ptr<ShardFileReader>> reader = ShardFileReader::Open(env, path);
  if (!reader.ok()) {
    CHECK(absl::IsDataLoss(reader.status()) || absl::IsFailedPrecondition(reader.status()))
        << reader.status();
    return;
  }
  const ShardFileReader& file = **reader;
  CHECK_EQ(file.info().bytes, static_cast<int64_t>(bytes.size()));
  for (int i = 0; i < file.num_variables(); ++i) {
    const ShardFileVariable& v = file.variable(i);
    CHECK_GE(file.FindVariable(v.name), 0);
    if (v.kind == VARIABLE_KIND_DENSE) {
      std::vector<float> out(static_cast<size_t>(v.num_elements));
      for (int part = 0; part <= file.header().num_slots; ++part) file.CopyDense(i, part, out.data());
    } else {
      std::vector<int64_t> ids(static_cast<size_t>(v.num_rows));
      std::vector<float> rows(static_cast<size_t>(v.num_rows * v.row_floats));
      file.CopyRows(i, ids.data(), rows.data());
    }
  }
  // Read again against what the MANIFEST would say of it.
  ShardFileExpectation expect;
  expect.bytes = file.info().bytes;
  expect.crc32c = file.info().crc32c;
  expect.check_crc32c = true;
  absl::StatusOr<std::unique_ptr<ShardFileReader>> again = ShardFileReader::Open(env, path, expect);
  CHECK(again.ok()) << again.status();
}

void ReadAsPointer(const std::string& bytes) {
  MemoryEnv env;
  env.PutFile(JoinPath(kModelDir, "checkpoint"), bytes);
  absl::StatusOr<int64_t> step = ReadCheckpointPointer(env, kModelDir);
  if (step.ok()) {
    CHECK_GE(*step, 0);
  } else {
    CHECK(absl::IsDataLoss(step.status())) << step.status();
  }
}

}  // namespace
}  // namespace pstrain

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  pstrain::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  pstrain::ReadAsManifest(bytes);
  pstrain::ReadAsManifest(pstrain::fuzz::WithManifestChecksum(bytes));
  pstrain::ReadAsShardFile(bytes);
  pstrain::ReadAsShardFile(pstrain::fuzz::WithRecordChecksums(bytes));
  pstrain::ReadAsPointer(bytes);
  return 0;
}
