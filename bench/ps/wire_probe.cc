#include "bench/ps/wire_probe.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/clock/clock.h"
#include "common/model/parameters.h"
#include "common/random/random_source.h"
#include "glog/logging.h"
#include "server/ps/in_process_shard.h"
#include "worker/ps_client.h"
#include "worker/shard_slicer.h"

namespace pstrain {
namespace {

constexpr float kLearningRate = 1e-6f;
constexpr float kGradient = 0.5f;

// Shard `index` of `num_shards`, configured as pstrain-ps configures it,
// holding the variables of `variables` placed on it.
std::unique_ptr<InProcessShard> StartShard(
    int index, int num_shards, const std::vector<std::pair<std::string, Shape>>& variables,
    const std::vector<int>& placement, const WireProbeOptions& probe) {
  InProcessShardOptions options;
  options.service.chunk_bytes = probe.chunk_bytes;
  options.lanes = probe.shm;
  absl::StatusOr<std::unique_ptr<InProcessShard>> shard = InProcessShard::Start(options);
  CHECK(shard.ok()) << "cannot start shard " << index << ": " << shard.status();
  std::vector<std::pair<std::string, Shape>> placed;
  for (size_t i = 0; i < variables.size(); ++i) {
    if (placement[i] == index) placed.push_back(variables[i]);
  }
  const absl::Status created = (*shard)
                                   ->store()
                                   .CreateVariables(DenseVariablesRequest(
                                       "bench", index, num_shards, 1, kLearningRate, placed))
                                   .status();
  CHECK(created.ok()) << created;
  return *std::move(shard);
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

WireModel DenseWireModel(int mb, int num_shards) {
  WireModel m;
  m.label = absl::StrCat(mb, " MB");
  const int64_t elements = (int64_t{mb} << 20) / 4 / num_shards;
  for (int s = 0; s < num_shards; ++s) {
    m.variables.emplace_back(absl::StrCat("w", s), Shape({elements}));
    m.bytes += elements * 4;
  }
  return m;
}

WireModel MlpWireModel(const std::vector<int64_t>& hidden) {
  std::vector<int64_t> widths = {784};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(10);
  WireModel m;
  m.label = absl::StrCat("MLP ", absl::StrJoin(widths, "-"));
  for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    const std::string name = absl::StrCat("dense", layer);
    m.variables.emplace_back(name + "/kernel", Shape({widths[layer], widths[layer + 1]}));
    m.variables.emplace_back(name + "/bias", Shape({widths[layer + 1]}));
  }
  for (const auto& [name, shape] : m.variables) m.bytes += shape.num_elements() * 4;
  return m;
}

WireResult MeasureWire(const WireModel& model, int num_shards, const WireProbeOptions& probe) {
  std::vector<int> placement;
  for (size_t i = 0; i < model.variables.size(); ++i) placement.push_back(i % num_shards);
  std::vector<std::unique_ptr<InProcessShard>> shards;
  std::vector<std::string> addresses;
  for (int i = 0; i < num_shards; ++i) {
    shards.push_back(StartShard(i, num_shards, model.variables, placement, probe));
    addresses.push_back(shards.back()->address());
  }
  std::vector<VariableDef> defs;
  google::protobuf::RepeatedPtrField<VariablePlacement> placements;
  Gradients gradients;
  for (size_t i = 0; i < model.variables.size(); ++i) {
    const auto& [name, shape] = model.variables[i];
    VariableDef def;
    def.spec.set_name(name);
    def.spec.set_kind(VARIABLE_KIND_DENSE);
    def.spec.set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : shape.dims()) def.spec.mutable_shape()->add_dims(d);
    defs.push_back(def);
    VariablePlacement* p = placements.Add();
    p->set_name(name);
    p->set_shard_index(placement[i]);
    absl::StatusOr<float*> buffer = gradients.DenseBuffer(name, shape);
    CHECK(buffer.ok()) << buffer.status();
    std::fill(*buffer, *buffer + shape.num_elements(), kGradient);
  }
  absl::StatusOr<worker::ShardSlicer> slicer =
      worker::ShardSlicer::Create(defs, placements, num_shards);
  CHECK(slicer.ok()) << slicer.status();
  worker::ParameterServerClientOptions options;
  options.job_id = "bench";
  options.incarnation = 1;
  options.chunk_bytes = probe.chunk_bytes;
  options.streams_per_shard = probe.streams_per_shard;
  options.shared_memory = probe.shm;
  RealClock clock;
  SeededRandom random(1);
  absl::StatusOr<std::unique_ptr<worker::ParameterServerClient>> client =
      worker::ParameterServerClient::Create(addresses, *std::move(slicer), options, clock, random,
                                            /*metrics=*/nullptr);
  CHECK(client.ok()) << client.status();

  worker::PulledParameters pulled;
  pulled.versions.assign(num_shards, 0);
  WireResult result;
  result.bytes_per_step = 2 * model.bytes;
  const worker::PullOptions pull_options;
  const RowIds no_rows;
  std::chrono::steady_clock::time_point start;
  double cpu_start = 0;
  int step = 0;
  for (;; ++step) {
    if (step == probe.warmup_steps) {
      // Lanes open beside the streams the first steps opened.
      for (const auto& shard : shards) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (shard->lanes() != nullptr &&
               shard->lanes()->open_lanes() < probe.streams_per_shard) {
          CHECK(std::chrono::steady_clock::now() < deadline)
              << "the lanes to a shard did not open within 10 s";
          absl::SleepFor(absl::Milliseconds(1));
        }
      }
      start = std::chrono::steady_clock::now();
      cpu_start = CpuSeconds();
    }
    if (step >= probe.warmup_steps) {
      result.steps = step - probe.warmup_steps;
      result.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (result.steps >= probe.min_steps && result.seconds >= probe.seconds) break;
    }
    absl::StatusOr<worker::PushSummary> pushed = (*client)->Push(gradients, pulled.versions, 1);
    if (!pushed.ok() || !pushed->applied) {
      LOG(FATAL) << "push " << step << " of " << model.label << " over " << num_shards
                 << " shards failed: "
                 << (pushed.ok() ? "not applied" : pushed.status().ToString());
    }
    const absl::Status read = (*client)->Pull(no_rows, pull_options, &pulled);
    CHECK(read.ok()) << "pull " << step << " failed: " << read;
    CHECK_EQ(pulled.bytes, model.bytes);
  }
  result.cpu_seconds = CpuSeconds() - cpu_start;
  // The pulled model reflects every step: SGD from zeros with a constant
  // gradient, on every variable of every shard.
  const float expected = -kLearningRate * kGradient * step;
  for (const auto& [name, tensor] : pulled.dense) {
    const float* v = tensor.data<float>();
    const int64_t n = tensor.shape().num_elements();
    for (int64_t i : {int64_t{0}, n / 2, n - 1}) {
      CHECK_LE(std::abs(v[i] - expected), 1e-3f * std::abs(expected))
          << name << "[" << i << "] = " << v[i] << " after " << step << " steps, expected "
          << expected;
    }
  }
  client->reset();
  return result;
}


}  // namespace pstrain
