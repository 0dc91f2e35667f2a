// Push + pull of a 64 MB dense model through 1 and 2 parameter-server
// shards on loopback, beside a plain TCP stream measured in the same run.
//
// Each step a worker pushes the whole gradient (64 MB of float32, in 1 MiB
// chunks, split into one part per stream) and pulls the whole model back
// (each stream reads its range of the variable, waiting for the version
// its push made). Effective rate = (bytes pushed + bytes pulled) / time.
//
//   bazel run -c opt //bench/ps:push_pull_bench -- [--model_mb=64] [--steps=20]

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/ps/loopback_reference.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/ps/allocator_tuning.h"
#include "common/clock/clock.h"
#include "server/ps/parameter_server_service.h"
#include "server/ps/shard_store.h"

DEFINE_int32(model_mb, 64, "model size in MB (2^20 bytes)");
DEFINE_int32(steps, 20, "measured steps per configuration");
DEFINE_int32(warmup_steps, 3, "steps before measuring");
DEFINE_string(streams, "1,2,4", "streams per shard to try");
DEFINE_int32(chunk_kb, 1024, "bytes of values per message, in KiB");
DEFINE_bool(tune_transport, true, "larger HTTP/2 frames and TCP read chunks on both ends");
DEFINE_bool(reference, true, "also measure loopback TCP (off when profiling)");

namespace pstrain {
namespace {

constexpr int kMaxMessage = 16 << 20;
constexpr int kFrameBytes = (1 << 24) - 1;  // HTTP/2's largest frame
constexpr int kReadChunkBytes = 4 << 20;

// One shard: its own store, service and server on 127.0.0.1:0.
struct Shard {
  Shard(int index, int num_shards, int64_t elements) {
    store = std::make_unique<ShardStore>(ShardStoreOptions(), clock, registry);
    ParameterServerServiceOptions options;
    options.chunk_bytes = static_cast<int64_t>(FLAGS_chunk_kb) << 10;
    service = std::make_unique<ParameterServerService>(*store, options);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(kMaxMessage);
    if (FLAGS_tune_transport) {
      builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, kFrameBytes);
      builder.AddChannelArgument(GRPC_ARG_TCP_READ_CHUNK_SIZE, kReadChunkBytes);
      builder.AddChannelArgument(GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, kReadChunkBytes);
      builder.AddChannelArgument(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, kReadChunkBytes);
    }
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    CHECK(server != nullptr);
    CreateVariablesRequest r;
    r.set_job_id("bench");
    r.set_shard_index(index);
    r.set_num_shards(num_shards);
    r.set_num_workers(1);
    r.mutable_optimizer()->set_learning_rate(1e-6f);
    VariableSpec* v = r.add_variables();
    v->set_name(absl::StrCat("w", index));
    v->set_kind(VARIABLE_KIND_DENSE);
    v->set_dtype(DATA_TYPE_FLOAT32);
    v->mutable_shape()->add_dims(elements);
    const absl::Status created = store->CreateVariables(r).status();
    CHECK(created.ok()) << created;
  }
  ~Shard() { server->Shutdown(); }

  RealClock clock;
  prometheus::Registry registry;
  std::unique_ptr<ShardStore> store;
  std::unique_ptr<ParameterServerService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

// One PushPull stream on its own TCP connection.
struct Stream {
  Stream(int port, int id) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    // Distinct arguments and a local subchannel pool: a connection per stream.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("pstrain.bench_stream", id);
    if (FLAGS_tune_transport) {
      args.SetInt(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, kFrameBytes);
      args.SetInt(GRPC_ARG_TCP_READ_CHUNK_SIZE, kReadChunkBytes);
      args.SetInt(GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, kReadChunkBytes);
      args.SetInt(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, kReadChunkBytes);
    }
    channel = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                        grpc::InsecureChannelCredentials(), args);
    stub = ParameterServer::NewStub(channel);
    stream = stub->PushPull(&context);
  }
  ~Stream() {
    stream->WritesDone();
    stream->Finish();
  }

  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<ParameterServer::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<PushPullRequest, PushPullResponse>> stream;
};

// One step of stream k of K on one shard: push part k of the gradient, pull
// range k of the variable as of the new version, copy it into `params`.
void StreamStep(Stream& s, const std::string& name, const std::vector<float>& grad,
                std::vector<float>& params, int k, int num_streams, int64_t step,
                int64_t chunk_bytes) {
  const int64_t n = static_cast<int64_t>(grad.size());
  const int64_t total = n * 4;
  const int64_t chunks = (total + chunk_bytes - 1) / chunk_bytes;
  PushPullRequest m;
  m.set_tag(1);
  PushRequest* p = m.mutable_push();
  p->set_job_id("bench");
  p->mutable_id()->set_worker(0);
  p->mutable_id()->set_incarnation(1);
  p->mutable_id()->set_sequence(step + 1);
  p->set_base_version(step);
  p->set_num_parts(num_streams);
  p->set_part(k);
  NamedTensor* g = p->add_gradients();
  g->set_name(name);
  DenseTensor* d = g->mutable_dense();
  d->set_dtype(DATA_TYPE_FLOAT32);
  d->mutable_shape()->add_dims(n);
  d->mutable_chunk()->set_total_bytes(total);
  const char* bytes = reinterpret_cast<const char*>(grad.data());
  std::vector<int64_t> mine;
  for (int64_t c = k; c < chunks; c += num_streams) mine.push_back(c);
  if (mine.empty()) p->clear_gradients();
  for (size_t i = 0; i < mine.size() || (i == 0 && mine.empty()); ++i) {
    if (!mine.empty()) {
      const int64_t at = mine[i] * chunk_bytes;
      d->mutable_chunk()->set_offset(at);
      d->set_data(bytes + at, std::min(chunk_bytes, total - at));
    }
    p->set_end_of_push(i + 1 >= mine.size());
    CHECK(s.stream->Write(m));
  }
  // The range this stream reads back, once the push is applied.
  PushPullRequest pull;
  pull.set_tag(2);
  pull.mutable_pull()->set_job_id("bench");
  pull.mutable_pull()->set_min_version(step + 1);
  pull.mutable_pull()->set_wait_ms(60000);
  DenseRange* range = pull.mutable_pull()->add_ranges();
  range->set_name(name);
  range->set_offset(n * k / num_streams);
  range->set_count(n * (k + 1) / num_streams - n * k / num_streams);
  CHECK(s.stream->Write(pull));
  bool pushed = false, pulled = false;
  PushPullResponse r;
  while (!(pushed && pulled) && s.stream->Read(&r)) {
    if (r.has_push()) {
      CHECK(r.push().outcome() == PUSH_OUTCOME_APPLIED ||
            r.push().outcome() == PUSH_OUTCOME_PART_RECEIVED)
          << r.push().ShortDebugString();
      pushed = true;
    } else if (r.has_pull()) {
      for (const NamedTensor& t : r.pull().values()) {
        std::memcpy(reinterpret_cast<char*>(params.data()) + t.dense().chunk().offset(),
                    t.dense().data().data(), t.dense().data().size());
      }
      pulled = r.pull().end_of_pull();
    } else {
      LOG(FATAL) << r.ShortDebugString();
    }
  }
  CHECK(pushed && pulled);
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Result {
  double bytes_per_second;  // pushed + pulled, wall time
  double cpu_per_step;      // seconds of CPU, server and client together
};

// Returns effective bytes per second (pushed + pulled) for a model of
// `model_bytes` spread evenly over `num_shards`, with `num_streams` streams
// per shard.
Result Run(int num_shards, int num_streams, int64_t model_bytes, int steps, int warmup) {
  const int64_t elements = model_bytes / 4 / num_shards;
  std::vector<std::unique_ptr<Shard>> shards;
  for (int i = 0; i < num_shards; ++i) {
    shards.push_back(std::make_unique<Shard>(i, num_shards, elements));
  }
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < num_shards; ++i) {
    for (int k = 0; k < num_streams; ++k) {
      streams.push_back(std::make_unique<Stream>(shards[i]->port, i * num_streams + k));
    }
  }
  std::vector<std::vector<float>> grads(num_shards, std::vector<float>(elements, 0.5f));
  std::vector<std::vector<float>> params(num_shards, std::vector<float>(elements));
  const int64_t chunk_bytes = static_cast<int64_t>(FLAGS_chunk_kb) << 10;
  std::chrono::steady_clock::time_point start;
  double cpu_start = 0;
  for (int step = 0; step < warmup + steps; ++step) {
    if (step == warmup) {
      start = std::chrono::steady_clock::now();
      cpu_start = CpuSeconds();
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < num_shards; ++i) {
      for (int k = 0; k < num_streams; ++k) {
        threads.emplace_back([&, i, k] {
          StreamStep(*streams[i * num_streams + k], absl::StrCat("w", i), grads[i], params[i], k,
                     num_streams, step, chunk_bytes);
        });
      }
    }
    for (std::thread& t : threads) t.join();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = CpuSeconds() - cpu_start;
  // The pulled model reflects every step: SGD with lr 1e-6 on gradient 0.5.
  CHECK_NEAR(params[0][0], -0.5e-6f * (warmup + steps), 1e-9f * (warmup + steps));
  streams.clear();
  return {2.0 * static_cast<double>(elements * 4 * num_shards) * steps / seconds, cpu / steps};
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  pstrain::TuneAllocatorForLargeMessages();
  const int64_t model_bytes = static_cast<int64_t>(FLAGS_model_mb) << 20;
  const int steps = FLAGS_steps, warmup = FLAGS_warmup_steps;
  std::vector<int> stream_counts;
  for (const char* p = FLAGS_streams.c_str(); *p;) {
    stream_counts.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  const double tcp =
      FLAGS_reference ? pstrain::LoopbackTcpBytesPerSecond(int64_t{4} << 30, 1 << 20) : 1.0;
  std::printf("reference: loopback TCP, one stream, 1 MiB writes: %.2f GB/s\n", tcp / 1e9);
  std::printf("model %lld MB, %d steps (after %d warm-up), chunks %d KiB\n",
              static_cast<long long>(model_bytes >> 20), steps, warmup, FLAGS_chunk_kb);
  std::printf("%-7s %-8s %-16s %-9s %-13s %s\n", "shards", "streams", "push+pull GB/s", "step ms",
              "ratio to TCP", "CPU ms/step (both ends)");
  for (int shards : {1, 2}) {
    for (int streams : stream_counts) {
      const pstrain::Result r = pstrain::Run(shards, streams, model_bytes, steps, warmup);
      const double rate = r.bytes_per_second;
      std::printf("%-7d %-8d %-16.2f %-9.1f %-13.2f %.1f\n", shards, streams, rate / 1e9,
                  2.0 * model_bytes / rate * 1e3, rate / tcp, r.cpu_per_step * 1e3);
      std::fflush(stdout);
    }
  }
  if (FLAGS_reference) {
    const double tcp_after = pstrain::LoopbackTcpBytesPerSecond(int64_t{4} << 30, 1 << 20);
    std::printf("reference again at the end: loopback TCP %.2f GB/s\n", tcp_after / 1e9);
  }
  return 0;
}
