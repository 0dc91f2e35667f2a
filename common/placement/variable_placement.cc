#include "common/placement/variable_placement.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;

// The bytes of a dense variable's values; InvalidArgument for a shape that
// no shard could hold.
absl::StatusOr<int64_t> DenseBytes(const VariableSpec& spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape().dims()) {
    if (d <= 0 || d > kMaxElements || n > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable \"", spec.name(), "\": dense dims must be > 0 and hold at most 2^40 elements"));
    }
    n *= d;
  }
  return n * static_cast<int64_t>(sizeof(float));
}

absl::Status CheckTable(const VariableSpec& spec) {
  const auto& dims = spec.shape().dims();
  if (dims.size() != 2 || dims[0] < 0 || dims[1] <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("embedding table \"", spec.name(), "\" needs shape [rows >= 0, dim > 0]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VariablePlacements> PlaceVariables(absl::Span<const VariableSpec> variables,
                                                  int num_shards) {
  if (num_shards < 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_shards must be >= 1, got ", num_shards));
  }
  VariablePlacements placements;
  placements.shard_index.assign(variables.size(), kEveryShard);
  placements.dense_bytes.assign(num_shards, 0);

  struct Dense {
    int64_t bytes;
    const std::string* name;
    size_t index;
  };
  std::vector<Dense> dense;
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < variables.size(); ++i) {
    const VariableSpec& spec = variables[i];
    if (spec.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("variable #", i, " has no name"));
    }
    if (!names.insert(spec.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable \"", spec.name(), "\" appears twice"));
    }
    switch (spec.kind()) {
      case VARIABLE_KIND_DENSE: {
        absl::StatusOr<int64_t> bytes = DenseBytes(spec);
        if (!bytes.ok()) return bytes.status();
        dense.push_back({*bytes, &spec.name(), i});
        break;
      }
      case VARIABLE_KIND_EMBEDDING: {
        absl::Status table = CheckTable(spec);
        if (!table.ok()) return table;
        break;
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("variable \"", spec.name(), "\" is neither dense nor an embedding table"));
    }
  }
  std::sort(dense.begin(), dense.end(), [](const Dense& a, const Dense& b) {
    return std::tie(b.bytes, *a.name) < std::tie(a.bytes, *b.name);
  });
  for (const Dense& d : dense) {
    // Shards are few (tens): a linear scan beats a heap's bookkeeping.
    const int shard = static_cast<int>(
        std::min_element(placements.dense_bytes.begin(), placements.dense_bytes.end()) -
        placements.dense_bytes.begin());
    placements.shard_index[d.index] = shard;
    placements.dense_bytes[shard] += d.bytes;
  }
  return placements;
}

std::vector<VariableSpec> VariablesOnShard(absl::Span<const VariableSpec> variables,
                                           const VariablePlacements& placements, int shard_index) {
  std::vector<VariableSpec> on_shard;
  for (size_t i = 0; i < variables.size() && i < placements.shard_index.size(); ++i) {
    const int shard = placements.shard_index[i];
    if (shard == kEveryShard || shard == shard_index) on_shard.push_back(variables[i]);
  }
  return on_shard;
}

}  // namespace pstrain
