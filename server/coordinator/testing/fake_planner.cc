#include "server/coordinator/testing/fake_planner.h"

namespace pstrain {
namespace coordinator {

absl::StatusOr<JobPlan> FakePlanner::Plan(const JobSpec& /*spec*/) {
  JobPlan plan;
  VariableSpec w;
  w.set_name("w");
  w.set_kind(VARIABLE_KIND_DENSE);
  w.mutable_shape()->add_dims(16);
  w.mutable_shape()->add_dims(4);
  plan.variables.push_back(w);
  VariableSpec b;
  b.set_name("b");
  b.set_kind(VARIABLE_KIND_DENSE);
  b.mutable_shape()->add_dims(4);
  plan.variables.push_back(b);
  VariableSpec table;
  table.set_name("emb");
  table.set_kind(VARIABLE_KIND_EMBEDDING);
  table.mutable_shape()->add_dims(0);
  table.mutable_shape()->add_dims(8);
  plan.variables.push_back(table);
  plan.num_records = num_records_;
  plan.description = "a fake model";
  return plan;
}

}  // namespace coordinator
}  // namespace pstrain
