// Writes the seed inputs of the checkpoint-reader, parameter-server and
// coordinator fuzz targets, made by the project's own writers: a MANIFEST
// (SerializeManifest), shard files (a ParameterShard's snapshot), and
// request sequences a worker, an evaluator and a client really send.
//
// Usage: bazel run //tests/fuzz:make_seed_corpus -- <tests/fuzz/corpus>
// (scripts/fuzz.sh --seeds does this). Existing seeds are overwritten;
// inputs the fuzzers found are left alone.

#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/clock/fake_clock.h"
#include "common/data/in_memory_source.h"
#include "common/data/tfrecord_writer.h"
#include "glog/logging.h"
#include "google/protobuf/text_format.h"
#include "prometheus/registry.h"
#include "protos/checkpoint.pb.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/testing/ps_test_client.h"
#include "server/ps/shard_store.h"
#include "common/checkpoint/memory_env.h"
#include "tests/fuzz/request_sequence.h"

namespace pstrain {
namespace {

template <typename Message>
Message FromText(const std::string& text) {
  Message message;
  CHECK(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

void WriteSeed(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = absl::StrCat(dir, "/", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CHECK(out.good()) << "cannot write " << path;
}

// ------------------------------------------------------ parameter server --

// Call kinds of parameter_server_fuzzer.cc.
enum PsCall : uint8_t {
  kCreateVariables = 0,
  kDropJob = 1,
  kStream = 2,
  kPull = 3,
  kSnapshot = 4,
  kRestore = 5,
  kPutFile = 6,
  kEndStream = 7,
  kRoundTrip = 8,
};

const char kCreateText[] = R"pb(
  job_id: "job-1" shard_index: 0 num_shards: 1 num_workers: 2
  variables {
    name: "w" kind: VARIABLE_KIND_DENSE dtype: DATA_TYPE_FLOAT32 shape { dims: [ 4, 3 ] }
    initializer { kind: INITIALIZER_KIND_UNIFORM min: -1 max: 1 seed: 7 }
  }
  variables {
    name: "b" kind: VARIABLE_KIND_DENSE dtype: DATA_TYPE_FLOAT32 shape { dims: 3 }
  }
  variables {
    name: "emb" kind: VARIABLE_KIND_EMBEDDING dtype: DATA_TYPE_FLOAT32 shape { dims: [ 0, 2 ] }
    initializer { kind: INITIALIZER_KIND_NORMAL stddev: 0.1 seed: 3 }
  }
)pb";

CreateVariablesRequest Create(const std::string& optimizer, const std::string& training) {
  CreateVariablesRequest request = FromText<CreateVariablesRequest>(kCreateText);
  *request.mutable_optimizer() = FromText<OptimizerSpec>(optimizer);
  *request.mutable_training() = FromText<TrainingSpec>(training);
  return request;
}

void AppendMessages(const std::vector<PushPullRequest>& messages, std::string* out) {
  for (const PushPullRequest& m : messages) fuzz::AppendCall(kStream, m, out);
}

// One worker's step: a dense push of `w` in chunks over two parts, `b`
// whole, rows of `emb`, then a pull of everything.
void AppendStep(int worker, uint64_t sequence, int64_t base_version, std::string* out) {
  const PushId id = MakePushId(worker, 1, sequence);
  const std::vector<float> w = {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f,
                                0.7f, 0.8f,  0.9f, 1.0f, 1.1f, 1.2f};
  const uint64_t tag = sequence * 10 + static_cast<uint64_t>(worker) * 1000;
  AppendMessages(DensePushMessages("job-1", id, base_version, "w", {4, 3}, w, 16, tag, 2, 0), out);
  AppendMessages(DensePushMessages("job-1", id, base_version, "w", {4, 3}, w, 16, tag + 1, 2, 1),
                 out);
  const std::vector<int64_t> ids = {5, -3, 5};
  const std::vector<float> rows = {1, 2, 3, 4, 5, 6};
  PushPullRequest table = RowsPushMessage("job-1", id, base_version, "emb", 2, ids, rows, tag + 2);
  table.mutable_push()->set_num_parts(1);
  fuzz::AppendCall(kStream, table, out);
  PushPullRequest pull = PullMessage("job-1", {"w", "b"}, tag + 3);
  RowSelection* selection = pull.mutable_pull()->add_rows();
  selection->set_name("emb");
  selection->add_ids(5);
  selection->add_ids(-3);
  fuzz::AppendCall(kStream, pull, out);
}

// A real snapshot of a shard after a few pushes, with its dedup state.
std::string ShardSnapshotBytes() {
  MemoryEnv env;
  FakeClock clock;
  prometheus::Registry registry;
  ShardStoreOptions options;
  options.checkpoint_root = "/ckpt";
  options.env = &env;
  ShardStore store(options, clock, registry);
  CHECK(store.CreateVariables(Create("adam {} learning_rate: 0.01",
                                     "update_mode: UPDATE_MODE_ASYNC"))
            .ok());
  CHECK(store.pushes().pending_pushes() == 0);
  SnapshotRequest snapshot;
  snapshot.set_job_id("job-1");
  snapshot.set_path("/ckpt/model/ckpt-3/shard-0-of-1");
  snapshot.set_global_step(3);
  CHECK(store.Snapshot(snapshot).ok());
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, snapshot.path(), 1 << 20);
  CHECK(bytes.ok()) << bytes.status();
  return *bytes;
}

void WriteParameterServerSeeds(const std::string& dir) {
  {  // asynchronous training, snapshot, restore, unary pull, drop
    std::string in;
    fuzz::AppendCall(kCreateVariables,
                     Create("adam {} learning_rate: 0.01", "update_mode: UPDATE_MODE_ASYNC"), &in);
    AppendStep(0, 1, 0, &in);
    AppendStep(1, 1, 1, &in);
    fuzz::AppendCall(kPull, FromText<PullRequest>(R"pb(
                       job_id: "job-1" names: "b" min_version: 1
                       ranges { name: "w" offset: 2 count: 5 }
                       rows { name: "emb" ids: [ 5, 9 ] }
                     )pb"),
                     &in);
    fuzz::AppendCall(kSnapshot, FromText<SnapshotRequest>(R"pb(
                       job_id: "job-1" path: "model/ckpt-2/shard-0-of-1" global_step: 2
                     )pb"),
                     &in);
    AppendStep(0, 2, 2, &in);
    fuzz::AppendCall(kRestore, FromText<RestoreRequest>(R"pb(
                       job_id: "job-1" path: "/ckpt/model/ckpt-2/shard-0-of-1"
                     )pb"),
                     &in);
    fuzz::AppendCall(kEndStream, "", &in);
    fuzz::AppendCall(kDropJob, FromText<DropJobRequest>(R"pb(job_id: "job-1")pb"), &in);
    WriteSeed(dir, "async_snapshot_restore", in);
  }
  {  // a synchronous round of two workers, a retried push, a stale one
    std::string in;
    fuzz::AppendCall(kCreateVariables,
                     Create("momentum { momentum: 0.9 } learning_rate: 0.1 clip_norm: 5",
                            "update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 2"),
                     &in);
    AppendStep(0, 1, 0, &in);
    AppendStep(0, 1, 0, &in);  // the retry is a duplicate
    AppendStep(1, 1, 0, &in);
    AppendStep(1, 2, 0, &in);  // stale: the round moved on
    fuzz::AppendCall(kRoundTrip, "", &in);
    WriteSeed(dir, "sync_round", in);
  }
  {  // bounded staleness with FTRL; a push cut off by the end of its stream
    std::string in;
    fuzz::AppendCall(kCreateVariables,
                     Create("ftrl {} learning_rate: 0.05",
                            "update_mode: UPDATE_MODE_BOUNDED_STALENESS staleness_bound: 1"),
                     &in);
    AppendStep(0, 1, 0, &in);
    const std::vector<float> w(12, 0.5f);
    std::vector<PushPullRequest> cut =
        DensePushMessages("job-1", MakePushId(1, 1, 1), 0, "w", {4, 3}, w, 8, 77);
    cut.pop_back();
    AppendMessages(cut, &in);
    fuzz::AppendCall(kEndStream, "", &in);
    AppendStep(1, 1, 0, &in);
    fuzz::AppendCall(kRoundTrip, "", &in);
    WriteSeed(dir, "bounded_staleness_cut_push", in);
  }
  {  // restore from a snapshot file made by another shard
    std::string in;
    fuzz::AppendCall(kCreateVariables,
                     Create("adam {} learning_rate: 0.01", "update_mode: UPDATE_MODE_ASYNC"), &in);
    fuzz::AppendCall(kPutFile, ShardSnapshotBytes(), &in);
    fuzz::AppendCall(kRestore, FromText<RestoreRequest>(R"pb(
                       job_id: "job-1" path: "fuzz/shard-0-of-1"
                     )pb"),
                     &in);
    AppendStep(0, 1, 0, &in);
    WriteSeed(dir, "restore_file", in);
  }
}

// ---------------------------------------------------- checkpoint reader --

void WriteCheckpointSeeds(const std::string& dir) {
  const std::string shard = ShardSnapshotBytes();
  WriteSeed(dir, "shard-0-of-1", shard);
  CheckpointManifest manifest = FromText<CheckpointManifest>(R"pb(
    format_version: 1 global_step: 3 job_id: "clicks-1" created_unix_ms: 1700000000000
    data_position {
      epoch: 1 num_records: 10000
      finished { begin: 0 end: 2048 }
      finished { begin: 4096 end: 5120 }
    }
    spec {
      name: "clicks"
      model { logistic_regression { input_dim: 16 } }
      optimizer { sgd {} learning_rate: 0.1 }
      stop { max_steps: 100 }
      checkpoint { model_dir: "/tmp/pstrain/clicks" every_steps: 10 }
    }
  )pb");
  CheckpointShardFile* file = manifest.add_shards();
  file->set_name("shard-0-of-1");
  file->set_shard_index(0);
  file->set_bytes(static_cast<int64_t>(shard.size()));
  file->set_crc32c(Crc32c(shard));
  WriteSeed(dir, "MANIFEST", SerializeManifest(manifest));
  manifest.clear_shards();
  manifest.set_final(true);
  WriteSeed(dir, "MANIFEST-no-shards", SerializeManifest(manifest));
  WriteSeed(dir, "checkpoint", "1200\n");
}

// -------------------------------------------------------------- tfrecord --

// Three examples with the features tfrecord_fuzzer.cc reads, plain and
// gzipped; the third has two ids of its first field and none of its second.
void WriteTfRecordSeeds(const std::string& dir) {
  InMemorySource::Examples examples;
  examples.num_examples = 3;
  examples.dense_dim = 2;
  examples.dense_floats = {0.5f, -1, 2, 0, 3.25f, 1e-3f};
  examples.row_splits = {0, 2, 4, 6};
  examples.sparse_ids = {3, 40, 5, 41, 7, 8};
  examples.sparse_dim = 97;
  examples.num_fields = 2;
  examples.labels = {1, 0, 1};
  absl::StatusOr<std::unique_ptr<InMemorySource>> source = InMemorySource::Create(examples);
  CHECK(source.ok()) << source.status();
  PosixEnv env;
  TfRecordWriteOptions options;
  CHECK(WriteTfRecordFile(env, absl::StrCat(dir, "/three_examples"), **source, options).ok());
  options.gzip = true;
  CHECK(WriteTfRecordFile(env, absl::StrCat(dir, "/three_examples_gzip"), **source, options).ok());
}

// ----------------------------------------------------------- coordinator --

// Call kinds of coordinator_fuzzer.cc.
enum CoordinatorCall : uint8_t {
  kRegister = 0,
  kHeartbeat = 1,
  kReportProgress = 2,
  kAcquireDataLease = 3,
  kCompleteDataLease = 4,
  kReportEval = 5,
  kWatchCheckpoints = 6,
  kReleaseCheckpoint = 7,
  kSubmitJob = 8,
  kGetJob = 9,
  kListJobs = 10,
  kStopJob = 11,
  kWatchJob = 12,
  kExportModel = 13,
  kGetAssignment = 14,
  kAdvanceClock = 15,
  kSettle = 16,
  kShutdown = 17,
  kPutCheckpoint = 18,
};

const char kJobText[] = R"pb(
  spec {
    name: "clicks"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { logistic_regression { input_dim: 16 } }
    train_data { synthetic_clicks { num_examples: 1000 seed: 5 } batch_size: 32 }
    eval_data { synthetic_clicks { num_examples: 100 seed: 5 } batch_size: 50 }
    optimizer { sgd {} learning_rate: 0.1 }
    stop { max_steps: 20 }
    checkpoint { model_dir: "clicks" every_steps: 5 }
  }
)pb";

void Join(const std::string& task, std::string* out) {
  fuzz::AppendCall(kRegister, FromText<RegisterRequest>(task), out);
}

void WriteCoordinatorSeeds(const std::string& dir) {
  const std::string ps = R"pb(task { type: TASK_TYPE_PS index: 0 } incarnation: 1
                              address: "ps0:7000")pb";
  const std::string worker = R"pb(task { type: TASK_TYPE_WORKER index: 0 } incarnation: 1)pb";
  const std::string evaluator =
      R"pb(task { type: TASK_TYPE_EVALUATOR index: 0 } incarnation: 1)pb";
  const std::string worker_call = R"pb(task { type: TASK_TYPE_WORKER index: 0 } incarnation: 1
                                       job_id: "clicks-1")pb";
  {  // a job through its life: leases, progress, checkpoints, evaluation
    std::string in;
    Join(ps, &in);
    Join(worker, &in);
    Join(evaluator, &in);
    fuzz::AppendCall(kSubmitJob, FromText<SubmitJobRequest>(kJobText), &in);
    fuzz::AppendCall(kSettle, "", &in);
    fuzz::AppendCall(kGetAssignment, FromText<GetAssignmentRequest>(worker), &in);
    fuzz::AppendCall(kAcquireDataLease, FromText<AcquireDataLeaseRequest>(worker_call), &in);
    fuzz::AppendCall(kReportProgress, FromText<ProgressReport>(absl::StrCat(worker_call, R"pb(
                       steps: 6 examples: 192 loss: 0.69 seconds: 0.5
                       parameter_version: 6)pb")),
                     &in);
    fuzz::AppendCall(kCompleteDataLease, FromText<CompleteDataLeaseRequest>(absl::StrCat(
                                             worker_call, R"pb(lease_id: 1
                                             returned { begin: 512 end: 1000 })pb")),
                     &in);
    fuzz::AppendCall(kAdvanceClock, std::string("\x0a\x00", 2), &in);
    fuzz::AppendCall(kHeartbeat, FromText<HeartbeatRequest>(absl::StrCat(worker_call, R"pb(
                       step: 6 health: MEMBER_HEALTH_OK)pb")),
                     &in);
    fuzz::AppendCall(kWatchCheckpoints, FromText<WatchCheckpointsRequest>(R"pb(
                       task { type: TASK_TYPE_EVALUATOR index: 0 } incarnation: 1
                       job_id: "clicks-1")pb"),
                     &in);
    fuzz::AppendCall(kReportEval, FromText<EvalReport>(R"pb(
                       task { type: TASK_TYPE_EVALUATOR index: 0 } incarnation: 1
                       job_id: "clicks-1" checkpoint_step: 5
                       metrics { key: "loss" value: 0.6 }
                       metrics { key: "accuracy" value: 0.7 }
                       examples: 100 seconds: 0.1 status: EVAL_STATUS_EVALUATED)pb"),
                     &in);
    fuzz::AppendCall(kReleaseCheckpoint, FromText<ReleaseCheckpointRequest>(R"pb(
                       task { type: TASK_TYPE_EVALUATOR index: 0 } incarnation: 1
                       job_id: "clicks-1" step: 5)pb"),
                     &in);
    fuzz::AppendCall(kReportProgress, FromText<ProgressReport>(absl::StrCat(worker_call, R"pb(
                       steps: 14 examples: 448 loss: 0.5 seconds: 1
                       parameter_version: 20)pb")),
                     &in);
    fuzz::AppendCall(kGetJob, FromText<GetJobRequest>(R"pb(job_id: "clicks-1")pb"), &in);
    fuzz::AppendCall(kWatchJob, FromText<WatchJobRequest>(R"pb(job_id: "clicks-1")pb"), &in);
    fuzz::AppendCall(kListJobs, FromText<ListJobsRequest>("limit: 5"), &in);
    fuzz::AppendCall(kExportModel, FromText<ExportModelRequest>(R"pb(job_id: "clicks-1")pb"),
                     &in);
    fuzz::AppendCall(kStopJob, FromText<StopJobRequest>(R"pb(job_id: "clicks-1")pb"), &in);
    fuzz::AppendCall(kSettle, "", &in);
    WriteSeed(dir, "job_life", in);
  }
  {  // a worker restarts with a new incarnation; a member is lost; shutdown
    std::string in;
    Join(ps, &in);
    Join(worker, &in);
    fuzz::AppendCall(kSubmitJob, FromText<SubmitJobRequest>(kJobText), &in);
    fuzz::AppendCall(kSettle, "", &in);
    fuzz::AppendCall(kAcquireDataLease, FromText<AcquireDataLeaseRequest>(worker_call), &in);
    Join(R"pb(task { type: TASK_TYPE_WORKER index: 0 } incarnation: 2)pb", &in);
    fuzz::AppendCall(kAcquireDataLease, FromText<AcquireDataLeaseRequest>(worker_call), &in);
    fuzz::AppendCall(kAdvanceClock, std::string("\xff\x00", 2), &in);
    fuzz::AppendCall(kShutdown, FromText<ShutdownRequest>("stop_running_job: true"), &in);
    WriteSeed(dir, "restart_and_shutdown", in);
  }
  {  // resuming from a checkpoint already in the model_dir
    std::string in;
    CheckpointManifest manifest = FromText<CheckpointManifest>(R"pb(
      format_version: 1 global_step: 10 job_id: "clicks-1"
      data_position { epoch: 0 num_records: 1000 finished { begin: 0 end: 320 } }
      shards { name: "shard-0-of-1" shard_index: 0 }
    )pb");
    *manifest.mutable_spec() = FromText<SubmitJobRequest>(kJobText).spec();
    manifest.mutable_spec()->mutable_checkpoint()->set_model_dir("/ckpt/clicks");
    fuzz::AppendCall(kPutCheckpoint, manifest, &in);
    Join(ps, &in);
    Join(worker, &in);
    Join(evaluator, &in);
    fuzz::AppendCall(kSubmitJob, FromText<SubmitJobRequest>(kJobText), &in);
    fuzz::AppendCall(kSettle, "", &in);
    fuzz::AppendCall(kAcquireDataLease, FromText<AcquireDataLeaseRequest>(worker_call), &in);
    fuzz::AppendCall(kGetJob, FromText<GetJobRequest>(R"pb(job_id: "clicks-1")pb"), &in);
    WriteSeed(dir, "resume", in);
  }
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seed_corpus <tests/fuzz/corpus folder>\n";
    return 2;
  }
  const std::string corpus = argv[1];
  pstrain::WriteCheckpointSeeds(corpus + "/checkpoint_reader");
  pstrain::WriteParameterServerSeeds(corpus + "/parameter_server");
  pstrain::WriteCoordinatorSeeds(corpus + "/coordinator");
  pstrain::WriteTfRecordSeeds(corpus + "/tfrecord");
  return 0;
}
