#include "tests/checkpoint_parameters.h"

#include <algorithm>
#include <map>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/shard_file.h"

namespace pstrain {
namespace testing_checkpoints {
namespace {

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

std::string Describe(float f) { return absl::StrFormat("%.9g (0x%08x)", f, Bits(f)); }

absl::Status AddShard(const ShardFileReader& shard, CheckpointParameters* out) {
  const int parts = 1 + shard.header().num_slots;
  for (int i = 0; i < shard.num_variables(); ++i) {
    const ShardFileVariable& v = shard.variable(i);
    if (v.kind == VARIABLE_KIND_DENSE) {
      if (out->values.count(v.name) > 0) {
        return absl::DataLossError(absl::StrCat("variable ", v.name, " is in two shard files"));
      }
      std::vector<float>& values = out->values[v.name];
      values.resize(static_cast<size_t>(v.num_elements * parts));
      for (int part = 0; part < parts; ++part) {
        shard.CopyDense(i, part, values.data() + part * v.num_elements);
      }
      out->dense_shard[v.name] = shard.header().shard_index;
      continue;
    }
    // In id order, over the rows of earlier shard files too: a table's rows
    // are written in its own order, each shard's in its own file.
    std::map<int64_t, std::vector<float>> rows_by_id;
    std::vector<int64_t>& sorted_ids = out->row_ids[v.name];
    std::vector<float>& values = out->values[v.name];
    for (size_t r = 0; r < sorted_ids.size(); ++r) {
      rows_by_id[sorted_ids[r]].assign(values.begin() + r * v.row_floats,
                                       values.begin() + (r + 1) * v.row_floats);
    }
    std::vector<int64_t> ids(v.num_rows);
    std::vector<float> rows(static_cast<size_t>(v.num_rows * v.row_floats));
    shard.CopyRows(i, ids.data(), rows.data());
    for (int64_t r = 0; r < v.num_rows; ++r) {
      const bool added = rows_by_id
                             .emplace(ids[r], std::vector<float>(rows.begin() + r * v.row_floats,
                                                                 rows.begin() + (r + 1) * v.row_floats))
                             .second;
      if (!added) {
        return absl::DataLossError(
            absl::StrCat("row ", ids[r], " of ", v.name, " is in two shard files"));
      }
    }
    sorted_ids.clear();
    values.clear();
    for (const auto& [id, row] : rows_by_id) {
      sorted_ids.push_back(id);
      values.insert(values.end(), row.begin(), row.end());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckpointParameters> ReadNewestCheckpoint(const std::string& model_dir) {
  PosixEnv env;
  absl::StatusOr<std::vector<CheckpointRef>> checkpoints = ListCheckpoints(env, model_dir);
  if (!checkpoints.ok()) return checkpoints.status();
  if (checkpoints->empty()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint in ", model_dir));
  }
  CheckpointParameters out;
  out.path = checkpoints->back().path;
  absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env, out.path);
  if (!manifest.ok()) return manifest.status();
  out.global_step = manifest->global_step();
  for (const CheckpointShardFile& file : manifest->shards()) {
    ShardFileExpectation expect;
    expect.bytes = file.bytes();
    expect.crc32c = file.crc32c();
    expect.check_crc32c = true;
    absl::StatusOr<std::unique_ptr<ShardFileReader>> shard =
        ShardFileReader::Open(env, JoinPath(out.path, file.name()), expect);
    if (!shard.ok()) return shard.status();
    if (absl::Status s = AddShard(**shard, &out); !s.ok()) return s;
  }
  return out;
}

std::string FirstDifference(const CheckpointParameters& a, const CheckpointParameters& b) {
  if (a.row_ids != b.row_ids) return "the embedding tables hold different row ids";
  for (const auto& [name, values] : a.values) {
    auto other = b.values.find(name);
    if (other == b.values.end()) return absl::StrCat(b.path, " has no variable ", name);
    if (values.size() != other->second.size()) {
      return absl::StrCat(name, " has ", values.size(), " floats in ", a.path, " but ",
                          other->second.size(), " in ", b.path);
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (Bits(values[i]) != Bits(other->second[i])) {
        return absl::StrCat(name, "[", i, "] of ", values.size(), ": ", Describe(values[i]),
                            " in ", a.path, " but ", Describe(other->second[i]), " in ", b.path);
      }
    }
  }
  if (a.values.size() != b.values.size()) {
    return absl::StrCat(b.path, " has variables that ", a.path, " lacks");
  }
  return "";
}

}  // namespace testing_checkpoints
}  // namespace pstrain
