#include "server/ps/replica_entry.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

std::string FloatBytes(absl::Span<const float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// A dense gradient whole: its segments put together where they lie.
std::string DenseBytes(const GradientRef& g, int64_t num_elements) {
  if (g.segments.empty()) return FloatBytes(g.values);
  std::string bytes(static_cast<size_t>(num_elements) * sizeof(float), '\0');
  for (const DenseSegment& s : g.segments) {
    std::memcpy(bytes.data() + s.offset * sizeof(float), s.values.data(),
                s.values.size() * sizeof(float));
  }
  return bytes;
}

absl::Span<const float> FloatsOf(const std::string& bytes) {
  return absl::MakeConstSpan(reinterpret_cast<const float*>(bytes.data()),
                             bytes.size() / sizeof(float));
}

}  // namespace

PushRequest ForwardedPush(const std::vector<std::unique_ptr<ShardVariable>>& variables,
                          const PushKey& key, int64_t base_version,
                          absl::Span<const GradientRef> gradients, const PushSource& source) {
  PushRequest push;
  push.mutable_id()->set_worker(key.worker);
  push.mutable_id()->set_incarnation(key.incarnation);
  push.mutable_id()->set_sequence(key.sequence);
  push.set_base_version(base_version);
  push.set_examples(source.examples);
  push.set_end_of_push(true);
  if (source.origin.has_value()) {
    PushOrigin* origin = push.mutable_origin();
    origin->set_lease_id(source.origin->lease_id);
    origin->set_epoch(source.origin->epoch);
    origin->mutable_records()->set_begin(source.origin->begin);
    origin->mutable_records()->set_end(source.origin->end);
  }
  for (const GradientRef& g : gradients) {
    const ShardVariable& v = *variables[g.variable];
    NamedTensor* tensor = push.add_gradients();
    tensor->set_name(v.spec.name());
    if (!g.rows) {
      DenseTensor* dense = tensor->mutable_dense();
      dense->set_dtype(DATA_TYPE_FLOAT32);
      *dense->mutable_shape() = v.spec.shape();
      dense->set_data(DenseBytes(g, v.num_elements));
      continue;
    }
    SparseRows* rows = tensor->mutable_rows();
    rows->set_dtype(DATA_TYPE_FLOAT32);
    rows->set_row_width(v.row_width);
    rows->mutable_ids()->Add(g.ids.begin(), g.ids.end());
    rows->set_values(FloatBytes(g.values));
  }
  return push;
}

ReplicaEntry CommitEntry(const std::string& job_id, int64_t round,
                         absl::Span<const PushKey> members) {
  ReplicaEntry entry;
  CommitRoundRequest* commit = entry.mutable_commit();
  commit->set_job_id(job_id);
  commit->set_round(round);
  for (const PushKey& m : members) {
    PushId* id = commit->add_members();
    id->set_worker(m.worker);
    id->set_incarnation(m.incarnation);
    id->set_sequence(m.sequence);
  }
  return entry;
}

ReplicaEntry SealEntry(const std::string& job_id, absl::Span<const int64_t> lease_ids) {
  ReplicaEntry entry;
  ReadPushLedgerRequest* seal = entry.mutable_seal();
  seal->set_job_id(job_id);
  seal->mutable_lease_ids()->Add(lease_ids.begin(), lease_ids.end());
  seal->set_seal(true);
  return entry;
}

absl::StatusOr<std::vector<GradientRef>> ForwardedGradients(
    const PushRequest& push, absl::FunctionRef<absl::StatusOr<int>(absl::string_view)> find) {
  std::vector<GradientRef> refs;
  refs.reserve(push.gradients_size());
  for (const NamedTensor& g : push.gradients()) {
    absl::StatusOr<int> variable = find(g.name());
    if (!variable.ok()) return variable.status();
    const bool rows = g.has_rows();
    const DataType dtype = rows ? g.rows().dtype() : g.dense().dtype();
    const std::string& bytes = rows ? g.rows().values() : g.dense().data();
    const bool shared = rows ? g.rows().has_shared() : g.dense().has_shared();
    if ((!rows && !g.has_dense()) || dtype != DATA_TYPE_FLOAT32 || shared ||
        (!rows && g.dense().has_chunk()) || bytes.size() % sizeof(float) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("the forwarded gradient of \"", g.name(),
                                                     "\" is not one whole float32 tensor"));
    }
    GradientRef ref;
    ref.variable = *variable;
    ref.rows = rows;
    ref.values = FloatsOf(bytes);
    if (rows) ref.ids = absl::MakeConstSpan(g.rows().ids().data(), g.rows().ids_size());
    refs.push_back(ref);
  }
  return refs;
}

PushKey ForwardedKey(const PushRequest& push) {
  return PushKey{push.id().worker(), push.id().incarnation(), push.id().sequence()};
}

}  // namespace pstrain
