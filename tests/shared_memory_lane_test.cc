// The worker's ps client against a real shard service over loopback gRPC,
// with shared-memory lanes on and off: the bytes take the lane when both
// ends allow it, the values are those of the message path, and a worker
// whose shard offers no lane keeps its bytes in the messages.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/clock/clock.h"
#include "common/model/model.h"
#include "common/process/child_process.h"
#include "common/random/random_source.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/ps/in_process_shard.h"
#include "worker/internal/shard_lane.h"
#include "worker/ps_client.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace {

constexpr float kLearningRate = 0.5f;
// Over one 1 MiB message, so the message path chunks it.
const Shape kWeights({300, 1000});
const Shape kBias({10});
// An embedding table, and the rows each step reads and updates.
constexpr int64_t kTableRows = 1000;
constexpr int64_t kTableDim = 16;
const std::vector<int64_t> kStepIds = {3, 17, 999, 42, 3};

// The value of counter `family` in `registry` whose first label has
// `label_value` (empty: the one without labels); 0 when it has none yet.
double CounterValue(const prometheus::Registry& registry, const std::string& family,
                    const std::string& label_value) {
  for (const prometheus::MetricFamily& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      const bool match = label_value.empty() ? m.label.empty()
                                             : !m.label.empty() && m.label[0].value == label_value;
      if (match) return m.counter.value;
    }
  }
  return 0;
}

// A shard in this process holding "weights", "bias" and the table "emb";
// lanes on when `lanes` is set.
struct Shard {
  explicit Shard(bool lanes) {
    InProcessShardOptions options;
    options.lanes = lanes;
    absl::StatusOr<std::unique_ptr<InProcessShard>> started = InProcessShard::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    in_process = *std::move(started);
    registry = in_process->lanes();
    address = in_process->address();
    CreateVariablesRequest request = DenseVariablesRequest(
        "lanes", 0, 1, 1, kLearningRate, {{"weights", kWeights}, {"bias", kBias}});
    VariableSpec* table = request.add_variables();
    table->set_name("emb");
    table->set_kind(VARIABLE_KIND_EMBEDDING);
    table->set_dtype(DATA_TYPE_FLOAT32);
    table->mutable_shape()->add_dims(kTableRows);
    table->mutable_shape()->add_dims(kTableDim);
    const absl::Status created = in_process->store().CreateVariables(request).status();
    EXPECT_TRUE(created.ok()) << created;
  }

  // Bytes counted in pstrain_ps_lane_bytes_total{direction}.
  double LaneBytes(const std::string& direction) const {
    return CounterValue(in_process->metrics(), "pstrain_ps_lane_bytes_total", direction);
  }

  // PushPull messages that came on lanes' connections.
  double LaneRequests() const {
    return CounterValue(in_process->metrics(), "pstrain_ps_lane_requests_total", "");
  }

  std::unique_ptr<InProcessShard> in_process;
  LaneRegistry* registry = nullptr;  // null: lanes off
  std::string address;
};

// A worker's client of `shard`, with lanes on or off, and what it needs.
struct Worker {
  // `tune` changes the client's options before it is made.
  Worker(const Shard& shard, bool shared_memory,
         const std::function<void(worker::ParameterServerClientOptions&)>& tune = nullptr)
      : metrics(registry) {
    std::vector<VariableDef> defs;
    google::protobuf::RepeatedPtrField<VariablePlacement> placements;
    for (const auto& [name, shape] : {std::pair{"weights", kWeights}, std::pair{"bias", kBias}}) {
      VariableDef def;
      def.spec.set_name(name);
      def.spec.set_kind(VARIABLE_KIND_DENSE);
      def.spec.set_dtype(DATA_TYPE_FLOAT32);
      for (int64_t d : shape.dims()) def.spec.mutable_shape()->add_dims(d);
      defs.push_back(def);
      placements.Add()->set_name(name);
    }
    VariableDef table;
    table.spec.set_name("emb");
    table.spec.set_kind(VARIABLE_KIND_EMBEDDING);
    table.spec.set_dtype(DATA_TYPE_FLOAT32);
    table.spec.mutable_shape()->add_dims(kTableRows);
    table.spec.mutable_shape()->add_dims(kTableDim);
    defs.push_back(table);
    absl::StatusOr<worker::ShardSlicer> slicer = worker::ShardSlicer::Create(defs, placements, 1);
    EXPECT_TRUE(slicer.ok()) << slicer.status();
    worker::ParameterServerClientOptions options;
    options.job_id = "lanes";
    options.incarnation = 1;
    options.shared_memory = shared_memory;
    if (tune) tune(options);
    absl::StatusOr<std::unique_ptr<worker::ParameterServerClient>> created =
        worker::ParameterServerClient::Create({shard.address}, *std::move(slicer), options, clock,
                                              random, &metrics);
    EXPECT_TRUE(created.ok()) << created.status();
    client = *std::move(created);
    pulled.versions.assign(1, 0);
  }

  // Pushes gradients that differ by element and step (the table's rows of
  // kStepIds among them, one id twice), then pulls.
  void Step(int step) {
    Gradients gradients;
    for (const auto& [name, shape] : {std::pair{"weights", kWeights}, std::pair{"bias", kBias}}) {
      float* g = gradients.DenseBuffer(name, shape).value();
      for (int64_t i = 0; i < shape.num_elements(); ++i) g[i] = 0.001f * (i % 97) + step;
    }
    float* rows = gradients.RowsBuffer("emb", kStepIds, kTableDim).value();
    for (int64_t i = 0; i < static_cast<int64_t>(kStepIds.size()) * kTableDim; ++i) {
      rows[i] = 0.01f * i + step;
    }
    absl::StatusOr<worker::PushSummary> pushed = client->Push(gradients, pulled.versions, 1);
    ASSERT_TRUE(pushed.ok()) << pushed.status();
    EXPECT_TRUE(pushed->applied);
    const absl::Status read = client->Pull({{"emb", kStepIds}}, worker::PullOptions(), &pulled);
    ASSERT_TRUE(read.ok()) << read;
  }

  double Fallbacks(const std::string& reason) const {
    return CounterValue(registry, "pstrain_worker_lane_fallbacks_total", reason);
  }

  prometheus::Registry registry;
  worker::WorkerMetrics metrics;
  RealClock clock;
  SeededRandom random{1};
  std::unique_ptr<worker::ParameterServerClient> client;
  worker::PulledParameters pulled;
};

bool AwaitOpenLanes(const LaneRegistry& registry, int open) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (registry.open_lanes() != open) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// Waits until `client` has `open` lanes open on its side. The shard
// registers a lane before it tells the worker, so this is the later of the
// two ends: from then on the client's exchanges take the lanes.
bool AwaitWorkerLanes(const worker::ParameterServerClient& client, int open) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (client.open_lanes() != open) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// Whether this process maps a lane segment (SharedSegment names them
// "memfd:pstrain-lane" in /proc/<pid>/maps).
bool MapsALaneSegment() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("memfd:pstrain-lane") != std::string::npos) return true;
  }
  return false;
}

void ExpectSameValues(const worker::PulledParameters& a, const worker::PulledParameters& b) {
  for (const char* name : {"weights", "bias"}) {
    const Tensor& x = a.dense.at(name);
    const Tensor& y = b.dense.at(name);
    ASSERT_EQ(x.num_elements(), y.num_elements()) << name;
    EXPECT_TRUE(std::equal(x.data<float>(), x.data<float>() + x.num_elements(), y.data<float>()))
        << name << " differs between the lane and the message path";
  }
  const EmbeddingRows& x = a.rows.at("emb");
  const EmbeddingRows& y = b.rows.at("emb");
  EXPECT_EQ(x.ids, y.ids);
  ASSERT_EQ(x.values.num_elements(), y.values.num_elements());
  EXPECT_TRUE(std::equal(x.values.data<float>(), x.values.data<float>() + x.values.num_elements(),
                         y.values.data<float>()))
      << "the table's rows differ between the lane and the message path";
}

TEST(SharedMemoryLaneTest, LanesCarryTheBytesAndGiveTheValuesOfTheMessagePath) {
  Shard with_lanes(/*lanes=*/true), without(/*lanes=*/false);
  ASSERT_NE(with_lanes.registry, nullptr);
  Worker through_lanes(with_lanes, /*shared_memory=*/true);
  Worker through_messages(without, /*shared_memory=*/false);
  // The first step opens the streams (pulls on lane 0, pushes on lane 1);
  // their lanes open beside them, without holding the step up.
  through_lanes.Step(0);
  through_messages.Step(0);
  ExpectSameValues(through_lanes.pulled, through_messages.pulled);
  ASSERT_TRUE(AwaitWorkerLanes(*through_lanes.client, 2));
  EXPECT_EQ(with_lanes.registry->open_lanes(), 2);
  EXPECT_EQ(through_messages.client->open_lanes(), 0);
  const double pushed_before = with_lanes.LaneBytes("push");
  const double pulled_before = with_lanes.LaneBytes("pull");
  const double requests_before = with_lanes.LaneRequests();
  for (int step = 1; step <= 3; ++step) {
    through_lanes.Step(step);
    through_messages.Step(step);
    ExpectSameValues(through_lanes.pulled, through_messages.pulled);
  }
  // Dense variables and the table's rows, both ways.
  const double step_bytes =
      (kWeights.num_elements() + kBias.num_elements() + kStepIds.size() * kTableDim) * 4.0;
  EXPECT_EQ(with_lanes.LaneBytes("push") - pushed_before, 3 * step_bytes);
  EXPECT_EQ(with_lanes.LaneBytes("pull") - pulled_before, 3 * step_bytes);
  EXPECT_EQ(without.LaneBytes("push"), 0);
  EXPECT_EQ(through_lanes.Fallbacks("FAILED_PRECONDITION"), 0);
  // The requests came on the lanes' own connections: a pull and a push
  // part at least, each step.
  EXPECT_GE(with_lanes.LaneRequests() - requests_before, 3 * 2);
  EXPECT_EQ(without.LaneRequests(), 0);
  // The values moved: SGD from zeros, so weights[1] = -lr * sum of steps'
  // gradients (0.001 + step).
  EXPECT_FLOAT_EQ(through_lanes.pulled.dense.at("weights").data<float>()[1],
                  -kLearningRate * (4 * 0.001f + 0 + 1 + 2 + 3));

  // A client that goes closes its lanes, and the shard lets them go.
  through_lanes.client.reset();
  EXPECT_TRUE(AwaitOpenLanes(*with_lanes.registry, 0));
}

TEST(SharedMemoryLaneTest, AShardWithLanesOffGetsEveryByteInTheMessages) {
  Shard without(/*lanes=*/false);
  Worker worker(without, /*shared_memory=*/true);
  for (int step = 0; step < 3; ++step) worker.Step(step);
  EXPECT_FLOAT_EQ(worker.pulled.dense.at("weights").data<float>()[1],
                  -kLearningRate * (3 * 0.001f + 0 + 1 + 2));
  EXPECT_EQ(without.LaneBytes("pull"), 0);
  // One refused opening per stream (lane), each counted.
  worker.client.reset();
  EXPECT_EQ(worker.Fallbacks("FAILED_PRECONDITION"), 2);
}

TEST(SharedMemoryLaneTest, AnExchangeOwnsItsRegionUntilLetGoAndAFullLaneLeavesBytesInMessages) {
  Shard shard(/*lanes=*/true);
  ASSERT_NE(shard.registry, nullptr);
  absl::Notification opened;
  absl::StatusOr<std::shared_ptr<worker::internal::ShardLane>> lane;
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(shard.address, grpc::InsecureChannelCredentials());
  worker::internal::ShardLane::OpenAsync(
      channel, 1 << 20, [&](absl::StatusOr<std::shared_ptr<worker::internal::ShardLane>> l) {
        lane = std::move(l);
        opened.Notify();
      });
  ASSERT_TRUE(opened.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(lane.ok()) << lane.status();
  EXPECT_EQ(shard.registry->open_lanes(), 1);

  // A push part of 600 KiB.
  const std::vector<float> gradient(150 << 10, 1.5f);
  std::vector<worker::internal::OutgoingRequest> requests(1);
  requests[0].message.mutable_push()->add_gradients()->mutable_dense();
  requests[0].dense_data = {absl::MakeConstSpan(reinterpret_cast<const char*>(gradient.data()),
                                                gradient.size() * sizeof(float))};
  std::vector<worker::internal::OutgoingRequest> placed;
  std::shared_ptr<worker::internal::SegmentRegion> region = (*lane)->Place(requests, 0, &placed);
  ASSERT_NE(region, nullptr);
  // The caller's requests are as they were, for a retry on another stream.
  EXPECT_EQ(requests[0].dense_data[0].size(), gradient.size() * sizeof(float));
  EXPECT_FALSE(requests[0].message.has_lane());
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_TRUE(placed[0].dense_data.empty());
  EXPECT_EQ(placed[0].message.lane().lane(), region->where().lane());
  const SharedBytes& at = placed[0].message.push().gradients(0).dense().shared();
  EXPECT_EQ(at.size(), static_cast<int64_t>(gradient.size() * sizeof(float)));
  // The shard reads what the worker wrote, where the request says.
  absl::StatusOr<std::shared_ptr<const SharedSegment>> segment =
      shard.registry->Find(region->where().lane());
  ASSERT_TRUE(segment.ok()) << segment.status();
  EXPECT_EQ(std::memcmp((*segment)->data() + at.offset(), gradient.data(), at.size()), 0);
  ASSERT_NE(region->Find(at), nullptr);
  SharedBytes past = at;
  past.set_offset(region->where().offset() + region->where().size());
  EXPECT_EQ(region->Find(past), nullptr);

  // While the first exchange holds its region, a second does not fit: it
  // keeps its bytes in its messages.
  std::vector<worker::internal::OutgoingRequest> second;
  EXPECT_EQ((*lane)->Place(requests, 0, &second), nullptr);
  EXPECT_EQ((*lane)->used_bytes(), region->where().size());
  region.reset();
  EXPECT_EQ((*lane)->used_bytes(), 0);
  region = (*lane)->Place(requests, 0, &second);
  EXPECT_NE(region, nullptr);

  // The lane closes on the shard once its last holder lets go, and
  // neither end keeps the segment mapped.
  region.reset();
  lane = absl::CancelledError("dropped");
  EXPECT_TRUE(AwaitOpenLanes(*shard.registry, 0));
  segment = absl::CancelledError("dropped");
  EXPECT_FALSE(MapsALaneSegment());
}

TEST(SharedMemoryLaneTest, AWorkerKilledWithSigkillLeavesNoLaneAndNoMappingOnTheShard) {
  Shard shard(/*lanes=*/true);
  ASSERT_NE(shard.registry, nullptr);
  ASSERT_FALSE(MapsALaneSegment());
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr) << "run under bazel test";
  const std::string log = absl::StrCat(std::getenv("TEST_TMPDIR"), "/lane_holder.log");
  ChildProcessOptions options;
  options.program = absl::StrCat(srcdir, "/pstrain/tests/lane_holder");
  options.args = {shard.address};
  options.log_path = log;
  absl::StatusOr<std::unique_ptr<ChildProcess>> holder = ChildProcess::Start(options);
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE(AwaitOpenLanes(*shard.registry, 1));
  // The shard (this process) maps the worker's segment while the lane is
  // open...
  EXPECT_TRUE(MapsALaneSegment());
  (*holder)->Signal(SIGKILL);
  absl::StatusOr<ExitStatus> exit = (*holder)->Wait(absl::Seconds(10));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->signal, SIGKILL)
      << exit->ToString() << "; its log:\n"
      << std::string(std::istreambuf_iterator<char>(std::ifstream(log).rdbuf()), {});
  // ...and neither the lane nor the mapping outlives the worker.
  EXPECT_TRUE(AwaitOpenLanes(*shard.registry, 0));
  EXPECT_FALSE(MapsALaneSegment());
}

// Pushes on this thread and pulls on another at once, as async training
// overlaps them, through a worker whose client `tune` sets up with `lanes`
// lanes per shard: every call is answered, through the lanes, and every
// push applied once.
void PushAndPullAtOnce(int lanes,
                       const std::function<void(worker::ParameterServerClientOptions&)>& tune) {
  Shard shard(/*lanes=*/true);
  ASSERT_NE(shard.registry, nullptr);
  Worker worker(shard, /*shared_memory=*/true, tune);
  worker.Step(0);
  ASSERT_TRUE(AwaitWorkerLanes(*worker.client, lanes));
  const double requests_before = shard.LaneRequests();

  constexpr int kPushes = 30;
  constexpr int kPulls = 60;
  std::thread puller([&] {
    worker::PulledParameters pulled;
    for (int i = 0; i < kPulls; ++i) {
      const absl::Status read = worker.client->Pull({}, worker::PullOptions(), &pulled);
      ASSERT_TRUE(read.ok()) << "pull " << i << ": " << read;
    }
  });
  for (int step = 1; step <= kPushes; ++step) {
    Gradients gradients;
    for (const auto& [name, shape] : {std::pair{"weights", kWeights}, std::pair{"bias", kBias}}) {
      float* g = gradients.DenseBuffer(name, shape).value();
      std::fill(g, g + shape.num_elements(), 1.0f);
    }
    absl::StatusOr<worker::PushSummary> pushed = worker.client->Push(gradients, {0}, 1);
    ASSERT_TRUE(pushed.ok()) << "push " << step << ": " << pushed.status();
    EXPECT_TRUE(pushed->applied);
  }
  puller.join();

  // Every call went through the lane, and every push was applied once.
  EXPECT_GE(shard.LaneRequests() - requests_before, kPushes + kPulls);
  const absl::Status read = worker.client->Pull({}, worker::PullOptions(), &worker.pulled);
  ASSERT_TRUE(read.ok()) << read;
  // weights[1]'s gradient is 0.001 in Step(0), then 1 in each push.
  EXPECT_FLOAT_EQ(worker.pulled.dense.at("weights").data<float>()[1],
                  -kLearningRate * (0.001f + kPushes));
  EXPECT_EQ(worker.Fallbacks("FAILED_PRECONDITION"), 0);
}

TEST(SharedMemoryLaneTest, APushAndPullsOnOneLaneAtOnceEachGetTheirAnswers) {
  // One stream, so one lane's connection: the push's thread and the pulls'
  // thread wait on the same socket, and whichever reads hands the other its
  // answers.
  PushAndPullAtOnce(
      1, [](worker::ParameterServerClientOptions& options) { options.streams_per_shard = 1; });
}

TEST(SharedMemoryLaneTest, PushesAndPullsSplitOverTwoLanesAtOnceEachGetTheirAnswers) {
  // Every push and pull split in two, one part on each lane, each part in
  // several messages: both threads wait on both sockets, the push's parts
  // answered only once both have come.
  PushAndPullAtOnce(2, [](worker::ParameterServerClientOptions& options) {
    options.streams_per_shard = 2;
    options.parallel_min_bytes = 64 << 10;
    options.chunk_bytes = 64 << 10;
  });
}

TEST(SharedMemoryLaneTest, AShardThatGoesAwayWhileACallerWaitsOnItsLaneFailsTheCall) {
  Shard shard(/*lanes=*/true);
  ASSERT_NE(shard.registry, nullptr);
  Worker worker(shard, /*shared_memory=*/true, [](worker::ParameterServerClientOptions& options) {
    options.retry.initial_backoff = absl::Milliseconds(10);
    options.retry.deadline = absl::Seconds(1);
  });
  worker.Step(0);
  ASSERT_TRUE(AwaitWorkerLanes(*worker.client, 2));
  const double requests_before = shard.LaneRequests();

  // A pull that waits on the shard for a version it will never reach, its
  // caller reading the lane's socket meanwhile.
  absl::Status read;
  absl::Notification returned;
  std::thread puller([&] {
    worker::PullOptions options;
    options.min_versions = {1000};
    read = worker.client->Pull({}, options, &worker.pulled);
    returned.Notify();
  });
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (shard.LaneRequests() == requests_before && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GT(shard.LaneRequests(), requests_before) << "the pull did not reach the lane";
  EXPECT_FALSE(returned.HasBeenNotified());

  const absl::Time gone = absl::Now();
  shard.in_process.reset();
  const bool ended = returned.WaitForNotificationWithTimeout(absl::Seconds(20));
  EXPECT_TRUE(ended) << "the pull still waits after its shard went away";
  puller.join();
  EXPECT_LT(absl::Now() - gone, absl::Seconds(20));
  // Retried until the retry deadline, the shard being gone.
  EXPECT_TRUE(absl::IsDeadlineExceeded(read) || absl::IsUnavailable(read)) << read;
}

}  // namespace
}  // namespace pstrain
