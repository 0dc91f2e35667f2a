#include "bench/sim/shard_tensors.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace bench {
namespace {

constexpr float kGradient = 1e-4f;

std::string Floats(int64_t count) {
  std::string bytes(static_cast<size_t>(count) * sizeof(float), '\0');
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(&bytes[static_cast<size_t>(i) * sizeof(float)], &kGradient, sizeof(float));
  }
  return bytes;
}

}  // namespace

int64_t SimVariable::DenseFloats() const {
  int64_t floats = 1;
  for (int64_t d : dims) floats *= d;
  return floats;
}

uint64_t PushIncarnation(absl::Time now, uint64_t salt) {
  const uint64_t micros = static_cast<uint64_t>(absl::ToUnixMicros(now));
  const uint64_t incarnation = (micros << 12) | (salt & 0xfff);
  return incarnation != 0 ? incarnation : 1;
}

std::vector<SimVariable> VariablesOf(const Assignment& assignment) {
  std::vector<SimVariable> variables;
  for (const VariablePlacement& placement : assignment.placements()) {
    if (placement.shard_index() > 0) continue;  // another shard's
    SimVariable variable;
    variable.name = placement.name();
    variable.table = placement.shard_index() < 0;
    variables.push_back(std::move(variable));
  }
  return variables;
}

PushPullRequest PullMessage(const ShardTraffic& traffic, int64_t first_id) {
  PushPullRequest message;
  PullRequest& pull = *message.mutable_pull();
  pull.set_job_id(traffic.job_id);
  pull.set_generation(traffic.generation);
  for (const SimVariable& variable : traffic.variables) {
    if (!variable.table) {
      if (traffic.dense) pull.add_names(variable.name);
      continue;
    }
    if (!traffic.sparse) continue;
    RowSelection& rows = *pull.add_rows();
    rows.set_name(variable.name);
    for (int i = 0; i < traffic.rows; ++i) rows.add_ids((first_id + i) % traffic.id_space);
  }
  return message;
}

absl::Status LearnShapes(const std::vector<PushPullResponse>& answers,
                         std::vector<SimVariable>* variables) {
  for (const PushPullResponse& answer : answers) {
    for (const NamedTensor& value : answer.pull().values()) {
      auto variable = std::find_if(variables->begin(), variables->end(),
                                   [&](const SimVariable& v) { return v.name == value.name(); });
      if (variable == variables->end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the shard answered ", value.name(), ", which was not asked for"));
      }
      if (value.has_dense()) {
        variable->dims.assign(value.dense().shape().dims().begin(),
                              value.dense().shape().dims().end());
      } else if (value.has_rows()) {
        variable->row_width = value.rows().row_width();
      }
    }
  }
  return absl::OkStatus();
}

bool ShapesKnown(const std::vector<SimVariable>& variables) {
  return std::all_of(variables.begin(), variables.end(), [](const SimVariable& v) {
    return v.table ? v.row_width > 0 : !v.dims.empty();
  });
}

std::vector<PushPullRequest> PushMessages(const ShardTraffic& traffic, const PushId& id,
                                          int64_t base_version, int64_t first_id) {
  std::vector<PushPullRequest> messages;
  int64_t room = 0;  // bytes left in the last message
  auto message = [&]() -> PushRequest& {
    if (messages.empty() || room <= 0) {
      messages.emplace_back();
      PushRequest& push = *messages.back().mutable_push();
      push.set_job_id(traffic.job_id);
      *push.mutable_id() = id;
      push.set_base_version(base_version);
      push.set_generation(traffic.generation);
      room = traffic.chunk_bytes;
    }
    return *messages.back().mutable_push();
  };
  for (const SimVariable& variable : traffic.variables) {
    if (variable.table) {
      if (!traffic.sparse || variable.row_width <= 0) continue;
      NamedTensor& gradient = *message().add_gradients();
      gradient.set_name(variable.name);
      SparseRows& rows = *gradient.mutable_rows();
      rows.set_dtype(DATA_TYPE_FLOAT32);
      rows.set_row_width(variable.row_width);
      for (int i = 0; i < traffic.rows; ++i) rows.add_ids((first_id + i) % traffic.id_space);
      rows.set_values(Floats(traffic.rows * variable.row_width));
      room -= traffic.rows * variable.row_width * 4;
      continue;
    }
    if (!traffic.dense || variable.dims.empty()) continue;
    const int64_t whole = variable.DenseFloats() * 4;
    for (int64_t offset = 0; offset < whole;) {
      if (room <= 0) message();  // a new message
      const int64_t size = std::min<int64_t>(std::max<int64_t>(room / 4 * 4, 4), whole - offset);
      NamedTensor& gradient = *message().add_gradients();
      gradient.set_name(variable.name);
      DenseTensor& piece = *gradient.mutable_dense();
      piece.set_dtype(DATA_TYPE_FLOAT32);
      for (int64_t d : variable.dims) piece.mutable_shape()->add_dims(d);
      if (size < whole) {
        piece.mutable_chunk()->set_offset(offset);
        piece.mutable_chunk()->set_total_bytes(whole);
      }
      piece.set_data(Floats(size / 4));
      offset += size;
      room -= size;
    }
  }
  if (messages.empty()) message();
  for (PushPullRequest& m : messages) m.mutable_push()->set_examples(0);
  messages.back().mutable_push()->set_end_of_push(true);
  messages.back().mutable_push()->set_examples(1);
  return messages;
}

}  // namespace bench
}  // namespace pstrain
