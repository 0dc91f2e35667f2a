// Sparse pull and push of embedding rows (64 floats each) on one shard: ids
// per second through the gRPC service on loopback, and through the shard
// alone (no network) as the reference, in the same run.
//
//   bazel run -c opt //bench/ps:sparse_bench -- [--rows=1000000] [--batch=4096]
//       [--report=FILE]

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/report/markdown_report.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "common/process/allocator_tuning.h"
#include "server/ps/in_process_shard.h"

DEFINE_int64(rows, 1000000, "rows in the table (ids drawn uniformly from [0, rows))");
DEFINE_int32(dim, 64, "floats per row");
DEFINE_int32(batch, 4096, "ids per pull or push message");
DEFINE_int32(batches, 250, "batches per stream and direction");
DEFINE_int32(streams, 2, "PushPull streams");
DEFINE_string(report, "", "write this run's section of bench/RESULTS.md here");

namespace pstrain {
namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<int64_t> RandomIds(std::mt19937_64& rng, int n) {
  std::uniform_int_distribution<int64_t> pick(0, FLAGS_rows - 1);
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) id = pick(rng);
  return ids;
}

PushPullRequest PullOf(const std::vector<int64_t>& ids, uint64_t tag) {
  PushPullRequest m;
  m.set_tag(tag);
  m.mutable_pull()->set_job_id("bench");
  RowSelection* sel = m.mutable_pull()->add_rows();
  sel->set_name("emb");
  sel->mutable_ids()->Add(ids.begin(), ids.end());
  return m;
}

PushPullRequest PushOf(const std::vector<int64_t>& ids, const std::vector<float>& values,
                       int worker, uint64_t sequence) {
  PushPullRequest m;
  m.set_tag(sequence);
  PushRequest* p = m.mutable_push();
  p->set_job_id("bench");
  p->mutable_id()->set_worker(worker);
  p->mutable_id()->set_incarnation(1);
  p->mutable_id()->set_sequence(sequence);
  p->set_end_of_push(true);
  SparseRows* rows = p->add_gradients()->mutable_rows();
  p->mutable_gradients(0)->set_name("emb");
  rows->set_dtype(DATA_TYPE_FLOAT32);
  rows->set_row_width(FLAGS_dim);
  rows->mutable_ids()->Add(ids.begin(), ids.end());
  rows->set_values(values.data(), values.size() * 4);
  return m;
}

// Sends `requests` on one stream from one thread while another reads the
// answers; returns when every request has been answered.
void RunStream(ParameterServer::Stub& stub, const std::vector<PushPullRequest>& requests) {
  grpc::ClientContext context;
  auto stream = stub.PushPull(&context);
  const size_t expected = requests.size();
  std::thread writer([&] {
    for (const PushPullRequest& r : requests) CHECK(stream->Write(r));
    stream->WritesDone();
  });
  size_t answered = 0;
  PushPullResponse r;
  while (answered < expected && stream->Read(&r)) {
    if (r.has_push()) {
      CHECK_EQ(r.push().outcome(), PUSH_OUTCOME_APPLIED) << r.ShortDebugString();
      ++answered;
    } else if (r.has_pull()) {
      if (r.pull().end_of_pull()) ++answered;
    } else {
      LOG(FATAL) << r.ShortDebugString();
    }
  }
  writer.join();
  CHECK(stream->Finish().ok());
  CHECK_EQ(answered, expected);
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  using namespace pstrain;
  TuneAllocatorForLargeBuffers();
  absl::StatusOr<std::unique_ptr<InProcessShard>> started = InProcessShard::Start();
  CHECK(started.ok()) << started.status();
  InProcessShard& in_process = **started;
  ShardStore& store = in_process.store();

  CreateVariablesRequest r;
  r.set_job_id("bench");
  r.set_num_shards(1);
  r.set_num_workers(FLAGS_streams);
  r.mutable_optimizer()->set_learning_rate(0.01f);
  VariableSpec* v = r.add_variables();
  v->set_name("emb");
  v->set_kind(VARIABLE_KIND_EMBEDDING);
  v->set_dtype(DATA_TYPE_FLOAT32);
  v->mutable_shape()->add_dims(0);  // dynamic
  v->mutable_shape()->add_dims(FLAGS_dim);
  CHECK(store.CreateVariables(r).ok());
  std::shared_ptr<ParameterShard> shard = store.GetJob("bench").value();

  // Every row exists before measuring (pulls of absent rows would only
  // compute initial values).
  std::mt19937_64 rng(1);
  const int b = FLAGS_batch;
  std::vector<float> grad(static_cast<size_t>(b) * FLAGS_dim, 0.001f);
  uint64_t seq = 0;
  for (int64_t first = 0; first < FLAGS_rows; first += b) {
    std::vector<int64_t> ids;
    for (int64_t id = first; id < std::min<int64_t>(first + b, FLAGS_rows); ++id) ids.push_back(id);
    std::vector<float> g(ids.size() * FLAGS_dim, 0.001f);
    CHECK_EQ(shard->Push({0, 1, ++seq}, 0, {GradientRef{0, true, ids, g}}).outcome,
             PUSH_OUTCOME_APPLIED);
  }
  std::printf("table: %lld rows of %d floats (%.0f MB), batches of %d ids, %d streams\n",
              static_cast<long long>(FLAGS_rows), FLAGS_dim,
              FLAGS_rows * FLAGS_dim * 4.0 / (1 << 20), b, FLAGS_streams);

  bench::MarkdownReport report("Sparse pull and push of embedding rows on one shard");
  std::vector<std::vector<std::string>> rows;
  double alone[2] = {0, 0};   // pull, push
  double served[2] = {0, 0};  // through gRPC

  // Reference: the shard alone, one thread.
  {
    const int batches = 100;
    std::vector<std::vector<int64_t>> ids;
    for (int i = 0; i < batches; ++i) ids.push_back(RandomIds(rng, b));
    std::vector<float> out(grad.size());
    auto start = std::chrono::steady_clock::now();
    for (const auto& batch : ids) CHECK(shard->ReadRows(0, batch, out.data()).ok());
    const double pull = batches * static_cast<double>(b) / Seconds(start);
    start = std::chrono::steady_clock::now();
    for (const auto& batch : ids) {
      CHECK_EQ(shard->Push({0, 1, ++seq}, 0, {GradientRef{0, true, batch, grad}}).outcome,
               PUSH_OUTCOME_APPLIED);
    }
    const double push = batches * static_cast<double>(b) / Seconds(start);
    std::printf("reference, shard alone (1 thread): pull %.2f M ids/s, push %.2f M ids/s\n",
                pull / 1e6, push / 1e6);
    alone[0] = pull;
    alone[1] = push;
  }

  // Through the service: one stream per simulated worker.
  std::vector<std::unique_ptr<ParameterServer::Stub>> stubs;
  for (int k = 0; k < FLAGS_streams; ++k) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("pstrain.bench_stream", k);
    stubs.push_back(ParameterServer::NewStub(
        grpc::CreateCustomChannel(in_process.address(), grpc::InsecureChannelCredentials(), args)));
  }
  for (const bool push : {false, true}) {
    std::vector<std::vector<PushPullRequest>> requests(FLAGS_streams);
    for (int k = 0; k < FLAGS_streams; ++k) {
      for (int i = 0; i < FLAGS_batches; ++i) {
        const std::vector<int64_t> ids = RandomIds(rng, b);
        requests[k].push_back(push ? PushOf(ids, grad, k, 1000000 + i) : PullOf(ids, i));
      }
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int k = 0; k < FLAGS_streams; ++k) {
      threads.emplace_back([&, k] { RunStream(*stubs[k], requests[k]); });
    }
    for (std::thread& t : threads) t.join();
    const double rate = FLAGS_streams * FLAGS_batches * static_cast<double>(b) / Seconds(start);
    std::printf("through gRPC on loopback: %s %.2f M ids/s (%.2f GB/s of rows)\n",
                push ? "push" : "pull", rate / 1e6, rate * FLAGS_dim * 4 / 1e9);
    served[push] = rate;
    rows.push_back({push ? "push" : "pull", absl::StrFormat("%.2f", alone[push] / 1e6),
                    absl::StrFormat("%.2f", rate / 1e6),
                    absl::StrFormat("%.2f", rate * FLAGS_dim * 4 / 1e9),
                    absl::StrFormat("%.2f", rate / alone[push])});
  }

  report.Paragraph(absl::StrFormat(
      "A dynamic table of %d rows of %d floats (%.0f MB, every row created before measuring) on "
      "one shard, SGD, async; ids drawn uniformly, %d per message. Through the gRPC service on "
      "loopback: %d streams, each writing %d requests while reading the answers (pushes: every "
      "one applied). The reference is the same shard alone on one thread (`ReadRows`, `Push`), "
      "no gRPC, in the same run.",
      FLAGS_rows, FLAGS_dim, FLAGS_rows * FLAGS_dim * 4.0 / (1 << 20), b, FLAGS_streams,
      FLAGS_batches));
  report.Command(absl::StrFormat(
      "bazel-bin/bench/ps/sparse_bench --rows=%d --dim=%d --batch=%d --batches=%d --streams=%d",
      FLAGS_rows, FLAGS_dim, FLAGS_batch, FLAGS_batches, FLAGS_streams));
  report.Table({"direction", "shard alone, M ids/s", "gRPC loopback, M ids/s", "GB/s of rows",
                "ratio to the shard alone"},
               rows);
  report.Target("1 M ids/s per shard through gRPC, pull and push",
                served[0] >= 1e6 && served[1] >= 1e6,
                absl::StrFormat("pull %.2f M, push %.2f M", served[0] / 1e6, served[1] / 1e6));
  const absl::Status written = report.WriteTo(FLAGS_report);
  if (!written.ok()) {
    std::fprintf(stderr, "sparse_bench: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  return 0;
}
