// The single-process trainer is the correctness oracle of the distributed
// system: its VariableStore and the parameter-server shards must start from
// the same values and take the same updates for the same gradients, bit for
// bit, whatever the number of shards.

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/optimizer/gradient_clipping.h"
#include "common/optimizer/learning_rate.h"
#include "common/optimizer/optimizer.h"
#include "common/placement/row_placement.h"
#include "common/placement/variable_placement.h"
#include "common/training/variable_store.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "common/clock/fake_clock.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/shard_metrics.h"

namespace pstrain {
namespace {

constexpr uint64_t kJobSeed = 17;

VariableSpec Variable(const std::string& name, VariableKind kind, std::vector<int64_t> dims,
                      InitializerKind init) {
  VariableSpec spec;
  spec.set_name(name);
  spec.set_kind(kind);
  spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : dims) spec.mutable_shape()->add_dims(d);
  spec.mutable_initializer()->set_kind(init);
  spec.mutable_initializer()->set_seed(5);
  spec.mutable_initializer()->set_min(-0.5f);
  spec.mutable_initializer()->set_max(0.5f);
  spec.mutable_initializer()->set_stddev(0.3f);
  return spec;
}

std::vector<VariableSpec> Variables() {
  return {
      Variable("dense/kernel", VARIABLE_KIND_DENSE, {9, 7}, INITIALIZER_KIND_GLOROT_UNIFORM),
      Variable("dense/bias", VARIABLE_KIND_DENSE, {7}, INITIALIZER_KIND_NORMAL),
      Variable("conv/kernel", VARIABLE_KIND_DENSE, {3, 3, 2, 4}, INITIALIZER_KIND_TRUNCATED_NORMAL),
      Variable("emb/dynamic", VARIABLE_KIND_EMBEDDING, {0, 4}, INITIALIZER_KIND_UNIFORM),
      Variable("emb/fixed", VARIABLE_KIND_EMBEDDING, {50, 3}, INITIALIZER_KIND_GLOROT_UNIFORM),
  };
}

int64_t NumElements(const VariableSpec& spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape().dims()) n *= d;
  return n;
}

// The ids each step updates: distinct, some repeated across steps, some new.
std::vector<int64_t> StepIds(const VariableSpec& table, int step) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 12; ++i) {
    const int64_t id =
        table.shape().dims(0) == 0 ? (i * 7919 + step * 3) - 40 : (i * 3 + step) % 50;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

float GradientValue(int step, int variable, int64_t i) {
  return 0.05f * std::sin(0.37f * static_cast<float>(i) + 1.3f * step + variable);
}

// One job's variables held both ways: by a VariableStore, and by
// `num_shards` ParameterShards placed as the coordinator places them.
class Parity {
 public:
  Parity(const OptimizerSpec& optimizer, int num_shards)
      : specs_(Variables()),
        placements_(PlaceVariables(specs_, num_shards).value()),
        optimizer_(Optimizer::Create(optimizer).value()),
        learning_rate_(LearningRate::Create(optimizer).value()),
        clip_norm_(optimizer.clip_norm()) {
    std::vector<VariableDef> defs;
    for (const VariableSpec& spec : specs_) defs.push_back({spec, true});
    store_ = VariableStore::Create(defs, kJobSeed, optimizer_.get()).value();
    for (int s = 0; s < num_shards; ++s) {
      CreateVariablesRequest r;
      r.set_job_id("parity");
      r.set_shard_index(s);
      r.set_num_shards(num_shards);
      r.set_num_workers(1);
      *r.mutable_optimizer() = optimizer;
      r.mutable_training()->set_seed(kJobSeed);
      for (const VariableSpec& spec : VariablesOnShard(specs_, placements_, s)) {
        *r.add_variables() = spec;
      }
      absl::StatusOr<std::unique_ptr<ParameterShard>> shard =
          ParameterShard::Create(r, ShardOptions(), clock_, metrics_);
      EXPECT_TRUE(shard.ok()) << shard.status();
      shards_.push_back(std::move(shard).value());
    }
  }

  int num_shards() const { return static_cast<int>(shards_.size()); }

  // Expects the values of every dense variable and of rows `ids` of every
  // table to be identical on both sides.
  void ExpectSameValues(const std::vector<int64_t>& ids, const std::string& when) {
    SCOPED_TRACE(when);
    ParameterView view;
    RowIds rows;
    for (const VariableSpec& spec : specs_) {
      if (spec.kind() == VARIABLE_KIND_EMBEDDING) rows[spec.name()] = TableIds(spec, ids);
    }
    ASSERT_TRUE(store_->PrepareView(rows, &view).ok());
    for (size_t v = 0; v < specs_.size(); ++v) {
      const VariableSpec& spec = specs_[v];
      if (spec.kind() == VARIABLE_KIND_DENSE) {
        const int shard = placements_.shard_index[v];
        std::vector<float> on_shard(NumElements(spec));
        ASSERT_TRUE(
            shards_[shard]->ReadDense(Index(shard, spec), 0, absl::MakeSpan(on_shard)).ok());
        const Tensor& local = *store_->dense(spec.name());
        const std::vector<float> in_store(local.data<float>(),
                                          local.data<float>() + local.num_elements());
        ASSERT_EQ(on_shard, in_store) << spec.name();
        continue;
      }
      const int64_t dim = spec.shape().dims(1);
      const EmbeddingRows& local = *view.rows.at(spec.name());
      for (size_t r = 0; r < local.ids.size(); ++r) {
        const int64_t id = local.ids[r];
        const int shard = RowShard(id, num_shards());
        std::vector<float> on_shard(dim);
        ASSERT_TRUE(shards_[shard]->ReadRows(Index(shard, spec), {id}, on_shard.data()).ok());
        const std::vector<float> in_store(local.values.data<float>() + r * dim,
                                          local.values.data<float>() + (r + 1) * dim);
        ASSERT_EQ(on_shard, in_store) << spec.name() << " row " << id;
      }
    }
  }

  // Applies update `step` on both sides: the trainer's way (global norm,
  // learning rate, VariableStore::Apply) and the workers' way (the whole
  // gradient clipped, then a push to every shard with its part of it).
  void Step(int step) {
    Gradients gradients;
    RowIds read;
    for (size_t v = 0; v < specs_.size(); ++v) {
      const VariableSpec& spec = specs_[v];
      if (spec.kind() == VARIABLE_KIND_DENSE) {
        std::vector<float> values;
        for (int64_t i = 0; i < NumElements(spec); ++i) values.push_back(GradientValue(step, v, i));
        std::vector<int64_t> dims(spec.shape().dims().begin(), spec.shape().dims().end());
        gradients.dense[spec.name()] = Tensor::FromValues<float>(Shape(dims), values).value();
        continue;
      }
      const int64_t dim = spec.shape().dims(1);
      const std::vector<int64_t> ids = StepIds(spec, step);
      read[spec.name()] = ids;
      std::vector<float> values;
      for (int64_t id : ids) {
        for (int64_t j = 0; j < dim; ++j) values.push_back(GradientValue(step, v, id * dim + j));
      }
      gradients.rows[spec.name()].ids = ids;
      gradients.rows[spec.name()].values =
          Tensor::FromValues<float>(Shape({static_cast<int64_t>(ids.size()), dim}), values).value();
    }
    // One clipping for both: train-local and a worker call the same code
    // on the same whole gradient. Every step of these tests clips.
    const double norm = ClipByGlobalNorm(clip_norm_, &gradients);
    if (clip_norm_ > 0) EXPECT_GT(norm, clip_norm_) << "step " << step << " was not clipped";

    // The trainer reads the rows of a step before it updates them.
    ParameterView view;
    ASSERT_TRUE(store_->PrepareView(read, &view).ok());
    UpdateStep update;
    update.learning_rate = static_cast<float>(learning_rate_.At(step));
    update.t = step + 1;
    ASSERT_TRUE(store_->Apply(gradients, update).ok());

    std::vector<std::vector<GradientRef>> pushes(num_shards());
    std::vector<std::vector<std::vector<int64_t>>> shard_ids(
        specs_.size(), std::vector<std::vector<int64_t>>(num_shards()));
    std::vector<std::vector<std::vector<float>>> shard_rows(
        specs_.size(), std::vector<std::vector<float>>(num_shards()));
    for (size_t v = 0; v < specs_.size(); ++v) {
      const VariableSpec& spec = specs_[v];
      if (spec.kind() == VARIABLE_KIND_DENSE) {
        const int shard = placements_.shard_index[v];
        const Tensor& grad = gradients.dense.at(spec.name());
        pushes[shard].push_back(GradientRef{Index(shard, spec), false, {}, Values(grad)});
        continue;
      }
      const EmbeddingRows& rows = gradients.rows.at(spec.name());
      const int64_t dim = spec.shape().dims(1);
      for (size_t r = 0; r < rows.ids.size(); ++r) {
        const int shard = RowShard(rows.ids[r], num_shards());
        shard_ids[v][shard].push_back(rows.ids[r]);
        const float* row = rows.values.data<float>() + r * dim;
        shard_rows[v][shard].insert(shard_rows[v][shard].end(), row, row + dim);
      }
      for (int s = 0; s < num_shards(); ++s) {
        if (shard_ids[v][s].empty()) continue;
        pushes[s].push_back(GradientRef{Index(s, spec), true, shard_ids[v][s], shard_rows[v][s]});
      }
    }
    for (int s = 0; s < num_shards(); ++s) {
      const PushReply reply =
          shards_[s]->Push({0, 1, static_cast<uint64_t>(step) + 1}, step, pushes[s]);
      ASSERT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED) << reply.status;
    }
  }

 private:
  int Index(int shard, const VariableSpec& spec) const {
    return shards_[shard]->FindVariable(spec.name()).value();
  }
  static absl::Span<const float> Values(const Tensor& t) {
    return absl::MakeConstSpan(t.data<float>(), t.num_elements());
  }
  static std::vector<int64_t> TableIds(const VariableSpec& spec, const std::vector<int64_t>& ids) {
    if (spec.shape().dims(0) == 0) return ids;
    std::vector<int64_t> in_range;
    for (int64_t id : ids) {
      if (id >= 0 && id < spec.shape().dims(0)) in_range.push_back(id);
    }
    return in_range;
  }

  const std::vector<VariableSpec> specs_;
  const VariablePlacements placements_;
  const std::unique_ptr<Optimizer> optimizer_;
  const LearningRate learning_rate_;
  const float clip_norm_;
  std::unique_ptr<VariableStore> store_;
  FakeClock clock_;
  prometheus::Registry registry_;
  ShardMetrics metrics_{registry_};
  std::vector<std::unique_ptr<ParameterShard>> shards_;
};

std::vector<OptimizerSpec> Optimizers() {
  std::vector<OptimizerSpec> specs(6);
  specs[0].mutable_sgd();
  specs[1].mutable_momentum()->set_nesterov(true);
  specs[2].mutable_adagrad();
  specs[3].mutable_adam();
  specs[4].mutable_ftrl()->set_l1(0.001f);
  specs[5].mutable_ftrl()->set_learning_rate_power(-0.3f);
  for (OptimizerSpec& spec : specs) {
    spec.set_learning_rate(0.1f);
    spec.mutable_schedule()->set_warmup_steps(2);
    spec.mutable_schedule()->mutable_cosine()->set_decay_steps(10);
  }
  return specs;
}

std::vector<int64_t> ProbeIds() {
  std::vector<int64_t> ids;
  for (int step = 0; step < 5; ++step) {
    for (const VariableSpec& spec : Variables()) {
      if (spec.kind() != VARIABLE_KIND_EMBEDDING) continue;
      for (int64_t id : StepIds(spec, step)) ids.push_back(id);
    }
  }
  ids.push_back(123456789);  // never updated: its initial value
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

TEST(SingleProcessParityTest, SameInitialValuesWhateverTheSharding) {
  for (int num_shards : {1, 3}) {
    Parity parity(OptimizerSpec(), num_shards);
    parity.ExpectSameValues(ProbeIds(), absl::StrCat(num_shards, " shards, initial values"));
  }
}

TEST(SingleProcessParityTest, SameUpdatesForTheSameGradients) {
  for (const OptimizerSpec& spec : Optimizers()) {
    SCOPED_TRACE(spec.ShortDebugString());
    Parity parity(spec, 3);
    for (int step = 0; step < 5; ++step) {
      parity.Step(step);
      parity.ExpectSameValues(ProbeIds(), absl::StrCat("after step ", step));
    }
  }
}

// Clipping by the global norm of the whole gradient before it is split
// over the shards, as a worker clips, is train-local's clipping bit for bit
// on any number of shards. (Clipping each shard's slice by its own norm, as
// shards once did, is not: each slice would keep up to clip_norm of its
// own, so the whole update could be sqrt(3) times too long on 3 shards.)
TEST(SingleProcessParityTest, SameClippingOnEveryNumberOfShards) {
  OptimizerSpec spec;
  spec.mutable_adam();
  spec.set_clip_norm(0.1f);
  for (int num_shards : {1, 3}) {
    Parity parity(spec, num_shards);
    for (int step = 0; step < 3; ++step) {
      parity.Step(step);
      parity.ExpectSameValues(ProbeIds(),
                              absl::StrCat(num_shards, " shards, after step ", step));
    }
  }
}

}  // namespace
}  // namespace pstrain
