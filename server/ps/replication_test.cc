// A primary and a backup shard, each behind its own gRPC server on
// loopback: what the primary acknowledges the backup holds.

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "gtest/gtest.h"
#include "server/ps/parameter_server_service.h"
#include "server/ps/replica_forwarder.h"
#include "server/ps/test_signal.h"

namespace pstrain {
namespace {

constexpr int kElements = 4;

// One replica: a store, its service and server.
struct Replica {
  Replica() : store(ShardStoreOptions(), clock, registry), service(store) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
    stub =
        ParameterServer::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  ~Replica() { server->Shutdown(); }

  ParameterShard& shard() { return *store.current_job(); }

  absl::Status ChangeReplica(ReplicaRole role, uint64_t epoch, const std::string& backup = "") {
    return Change(role, epoch, backup).status();
  }

  absl::StatusOr<ChangeReplicaResponse> Change(ReplicaRole role, uint64_t epoch,
                                               const std::string& backup = "") {
    ChangeReplicaRequest request;
    request.set_job_id("job");
    request.mutable_replica()->set_role(role);
    request.mutable_replica()->set_epoch(epoch);
    request.mutable_replica()->set_backup_address(backup);
    ChangeReplicaResponse response;
    grpc::ClientContext context;
    RETURN_IF_ERROR(FromGrpcStatus(stub->ChangeReplica(&context, request, &response)));
    return response;
  }

  FakeClock clock;
  prometheus::Registry registry;
  ShardStore store;
  ParameterServerService service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  std::unique_ptr<ParameterServer::Stub> stub;
};

CreateVariablesRequest Job(UpdateMode mode, bool agreed, ReplicaRole role,
                           const std::string& backup) {
  CreateVariablesRequest r;
  r.set_job_id("job");
  r.set_num_shards(1);
  r.set_num_workers(2);
  r.set_rounds_agreed(agreed);
  r.mutable_training()->set_update_mode(mode);
  r.mutable_optimizer()->set_learning_rate(0.1f);
  VariableSpec* w = r.add_variables();
  w->set_name("w");
  w->set_kind(VARIABLE_KIND_DENSE);
  w->set_dtype(DATA_TYPE_FLOAT32);
  w->mutable_shape()->add_dims(kElements);
  r.mutable_replica()->set_role(role);
  r.mutable_replica()->set_epoch(1);
  r.mutable_replica()->set_backup_address(backup);
  return r;
}

// Values that make float sums depend on their order.
std::vector<float> Gradient(int worker, int step) {
  std::vector<float> g(kElements);
  for (int i = 0; i < kElements; ++i) g[i] = 0.1f * (worker + 1) + 1e-7f * step * (i + 3);
  return g;
}

PushReply Push(ParameterShard& shard, int worker, uint64_t sequence, int64_t base, int step = 0,
               int64_t lease = 0) {
  const std::vector<float> g = Gradient(worker, step);
  PushSource source;
  source.examples = 8;
  if (lease > 0) source.origin = LeaseSlice{lease, 0, step * 8, step * 8 + 8};
  return shard.Push(PushKey{worker, 1, sequence}, base,
                    {GradientRef{0, false, {}, absl::MakeConstSpan(g)}}, source);
}

std::vector<float> Values(ParameterShard& shard) {
  std::vector<float> v(kElements);
  EXPECT_TRUE(shard.ReadDense(0, 0, absl::MakeSpan(v)).ok());
  return v;
}

class ReplicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "gRPC is not instrumented for ThreadSanitizer";
#endif
  }

  void Start(UpdateMode mode, bool agreed = false) {
    ASSERT_TRUE(backup_.store.CreateVariables(Job(mode, agreed, REPLICA_ROLE_BACKUP, "")).ok());
    ASSERT_TRUE(
        primary_.store.CreateVariables(Job(mode, agreed, REPLICA_ROLE_PRIMARY, backup_.address))
            .ok());
  }

  // The backup holds exactly what the primary holds.
  void ExpectSameState() {
    ParameterShard& p = primary_.shard();
    ParameterShard& b = backup_.shard();
    const std::vector<float> pv = Values(p), bv = Values(b);
    EXPECT_EQ(std::memcmp(pv.data(), bv.data(), kElements * sizeof(float)), 0);
    EXPECT_EQ(p.version(), b.version());
    EXPECT_EQ(p.ReadLedger({}, LedgerRead::kOnly)->DebugString(),
              b.ReadLedger({}, LedgerRead::kOnly)->DebugString());
  }

  Replica backup_;
  Replica primary_;
};

TEST_F(ReplicationTest, AsyncPushesReachTheBackupBeforeTheyAreAnswered) {
  Start(UPDATE_MODE_ASYNC);
  for (uint64_t s = 1; s <= 5; ++s) {
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(Push(primary_.shard(), w, s, primary_.shard().version(), s, 7).outcome,
                PUSH_OUTCOME_APPLIED);
      // Answered: the backup has it already.
      EXPECT_EQ(backup_.shard().version(), primary_.shard().version());
    }
  }
  ExpectSameState();
  // The backup's dedup window knows every push.
  std::optional<PushReply> again = backup_.shard().DecidedBefore(PushKey{1, 1, 3});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->outcome, PUSH_OUTCOME_DUPLICATE);
}

TEST_F(ReplicationTest, SyncRoundsAreBitwiseEqualOnTheBackup) {
  Start(UPDATE_MODE_SYNC);
  for (int round = 0; round < 4; ++round) {
    EXPECT_EQ(Push(primary_.shard(), 1, round + 1, round, round, 7).outcome,
              PUSH_OUTCOME_AGGREGATED);
    EXPECT_EQ(Push(primary_.shard(), 0, round + 1, round, round, 7).outcome, PUSH_OUTCOME_APPLIED);
  }
  EXPECT_EQ(primary_.shard().version(), 4);
  ExpectSameState();
}

TEST_F(ReplicationTest, AgreedRoundsAndSealsReachTheBackup) {
  Start(UPDATE_MODE_SYNC, /*agreed=*/true);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Push(primary_.shard(), 0, round + 1, round, round, 7).outcome,
              PUSH_OUTCOME_AGGREGATED);
    EXPECT_EQ(Push(primary_.shard(), 1, round + 1, round, round, 8).outcome,
              PUSH_OUTCOME_AGGREGATED);
    const std::vector<PushKey> members = {PushKey{0, 1, static_cast<uint64_t>(round + 1)},
                                          PushKey{1, 1, static_cast<uint64_t>(round + 1)}};
    absl::StatusOr<int64_t> version = primary_.shard().CommitRound(round, members);
    ASSERT_TRUE(version.ok()) << version.status();
    EXPECT_EQ(*version, round + 1);
  }
  // A staged push of lease 8, then the lease sealed: dropped on both.
  EXPECT_EQ(Push(primary_.shard(), 1, 4, 3, 3, 8).outcome, PUSH_OUTCOME_AGGREGATED);
  ASSERT_TRUE(primary_.shard().ReadLedger({8}, LedgerRead::kSeal).ok());
  ExpectSameState();
  EXPECT_EQ(Push(backup_.shard(), 1, 5, 3, 3, 8).status.code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ReplicationTest, APushWaitsForAStalledBackup) {
  Start(UPDATE_MODE_ASYNC);
  backup_.shard().PauseUpdates();
  TestSignal answered;
  PushReply reply;
  std::thread pusher([&] {
    reply = Push(primary_.shard(), 0, 1, 0);
    answered.Notify();
  });
  // The primary applied it, but neither answers nor publishes it.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (Values(primary_.shard())[0] == 0 && absl::Now() < deadline) std::this_thread::yield();
  EXPECT_NE(Values(primary_.shard())[0], 0);
  EXPECT_FALSE(answered.HasBeenNotified());
  EXPECT_EQ(primary_.shard().version(), 0);
  backup_.shard().ResumeUpdates();
  answered.Wait();
  pusher.join();
  EXPECT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(primary_.shard().version(), 1);
  ExpectSameState();
}

TEST_F(ReplicationTest, APromotedBackupFencesItsOldPrimary) {
  Start(UPDATE_MODE_ASYNC);
  ASSERT_EQ(Push(primary_.shard(), 0, 1, 0).outcome, PUSH_OUTCOME_APPLIED);
  ASSERT_EQ(Push(primary_.shard(), 1, 1, 1).outcome, PUSH_OUTCOME_APPLIED);
  const std::vector<float> acknowledged = Values(primary_.shard());
  ASSERT_TRUE(backup_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());

  // The old primary's next push is refused by the backup: NOT_PRIMARY, and
  // so is everything after it.
  const PushReply refused = Push(primary_.shard(), 0, 2, 2);
  EXPECT_EQ(refused.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(ReasonOf(refused.status), ERROR_REASON_NOT_PRIMARY) << refused.status;
  EXPECT_EQ(ReasonOf(primary_.store.GetJob("job").status()), ERROR_REASON_NOT_PRIMARY);

  // The new primary took each acknowledged push once.
  absl::StatusOr<std::shared_ptr<ParameterShard>> promoted = backup_.store.GetJob("job");
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  EXPECT_EQ(Values(**promoted), acknowledged);
  EXPECT_EQ(Push(**promoted, 1, 1, 1).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(Push(**promoted, 0, 2, 2).outcome, PUSH_OUTCOME_APPLIED);
  // The setup it holds is answered, changing nothing; an older epoch, or
  // another setup of the same one, is refused.
  EXPECT_TRUE(backup_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());
  EXPECT_EQ(ReasonOf(backup_.ChangeReplica(REPLICA_ROLE_PRIMARY, 1)), ERROR_REASON_REPLICA_FENCED);
  EXPECT_EQ(ReasonOf(backup_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2, primary_.address)),
            ERROR_REASON_REPLICA_FENCED);
}

TEST_F(ReplicationTest, GoingOnAloneAnswersAWaitingPush) {
  Start(UPDATE_MODE_ASYNC);
  backup_.shard().PauseUpdates();
  PushReply reply;
  std::thread pusher([&] { reply = Push(primary_.shard(), 0, 1, 0); });
  // Applied, and waiting for the backup.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (Values(primary_.shard())[0] == 0 && absl::Now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(primary_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());
  pusher.join();
  EXPECT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(primary_.shard().version(), 1);
  EXPECT_EQ(Push(primary_.shard(), 0, 2, 1).outcome, PUSH_OUTCOME_APPLIED);
  backup_.shard().ResumeUpdates();
}

// A backup restarted at its address holds no job: the primary is not
// fenced by that, its pushes wait until the coordinator drops the backup.
TEST_F(ReplicationTest, ABackupThatLostTheJobMakesPushesWaitNotFencesThePrimary) {
  Start(UPDATE_MODE_ASYNC);
  ASSERT_EQ(Push(primary_.shard(), 0, 1, 0).outcome, PUSH_OUTCOME_APPLIED);
  const float acknowledged = Values(primary_.shard())[0];
  DropJobRequest drop;
  drop.set_job_id("job");
  ASSERT_TRUE(backup_.store.DropJob(drop).ok());
  TestSignal answered;
  PushReply reply;
  std::thread pusher([&] {
    reply = Push(primary_.shard(), 0, 2, 1);
    answered.Notify();
  });
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (Values(primary_.shard())[0] == acknowledged && absl::Now() < deadline) {
    std::this_thread::yield();
  }
  // Applied on the primary, refused by the backup: still waiting.
  EXPECT_FALSE(answered.HasBeenNotified());
  EXPECT_TRUE(primary_.store.GetJob("job").ok());
  ASSERT_TRUE(primary_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());
  answered.Wait();
  pusher.join();
  EXPECT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED) << reply.status;
  EXPECT_EQ(Push(primary_.shard(), 1, 1, 2).outcome, PUSH_OUTCOME_APPLIED);
}

TEST_F(ReplicationTest, ABackupRefusesWorkers) {
  Start(UPDATE_MODE_ASYNC);
  EXPECT_EQ(ReasonOf(backup_.store.GetJob("job").status()), ERROR_REASON_NOT_PRIMARY);
  PullRequest pull;
  pull.set_job_id("job");
  pull.add_names("w");
  PullResponse response;
  grpc::ClientContext context;
  const absl::Status s = FromGrpcStatus(backup_.stub->Pull(&context, pull, &response));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(s), ERROR_REASON_NOT_PRIMARY);
  ReadPushLedgerRequest ledger;
  ledger.set_job_id("job");
  EXPECT_EQ(ReasonOf(backup_.store.ReadPushLedger(ledger).status()), ERROR_REASON_NOT_PRIMARY);
}

// A forwarded push of worker 0, sequence `s`.
ReplicaEntry PushEntry(uint64_t s) {
  const std::vector<float> g = Gradient(0, static_cast<int>(s));
  ReplicaEntry entry;
  PushRequest* push = entry.mutable_push();
  push->set_job_id("job");
  push->mutable_id()->set_worker(0);
  push->mutable_id()->set_incarnation(1);
  push->mutable_id()->set_sequence(s);
  push->set_base_version(0);
  NamedTensor* t = push->add_gradients();
  t->set_name("w");
  t->mutable_dense()->set_dtype(DATA_TYPE_FLOAT32);
  t->mutable_dense()->set_data(
      std::string(reinterpret_cast<const char*>(g.data()), g.size() * sizeof(float)));
  return entry;
}

TEST_F(ReplicationTest, ABrokenStreamResendsAndNothingIsAppliedTwice) {
  ASSERT_TRUE(
      backup_.store.CreateVariables(Job(UPDATE_MODE_ASYNC, false, REPLICA_ROLE_BACKUP, "")).ok());
  ReplicaForwarderOptions options;
  options.job_id = "job";
  options.epoch = 1;
  options.backup_address = backup_.address;
  ReplicaForwarder forwarder(options, primary_.store.metrics());
  uint64_t last = 0;
  for (uint64_t s = 1; s <= 6; ++s) {
    last = forwarder.Append(PushEntry(s));
    if (s % 2 == 0) forwarder.BreakStreamForTesting();
  }
  ASSERT_TRUE(forwarder.AwaitReplicated(last).ok());
  EXPECT_EQ(backup_.shard().version(), 6);
  EXPECT_EQ(backup_.shard().ReadLedger({}, LedgerRead::kOnly)->applied_pushes(), 6);

  // Entries applied before and sent again on a new stream are skipped.
  ReplicateRequest again;
  again.set_job_id("job");
  again.set_epoch(1);
  for (uint64_t s = 5; s <= 7; ++s) {
    ReplicaEntry* entry = again.add_entries();
    *entry = PushEntry(s);
    entry->set_sequence(s);
  }
  absl::StatusOr<ReplicaProgress> applied = backup_.store.Replicate(again);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->applied_through, 7);
  EXPECT_EQ(backup_.shard().version(), 7);
  // A gap is a divergence; an older epoch is fenced.
  ReplicateRequest gap = again;
  gap.clear_entries();
  *gap.add_entries() = PushEntry(9);
  gap.mutable_entries(0)->set_sequence(9);
  EXPECT_EQ(backup_.store.Replicate(gap).status().code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(backup_.ChangeReplica(REPLICA_ROLE_BACKUP, 3).ok());
  EXPECT_EQ(ReasonOf(backup_.store.Replicate(again).status()), ERROR_REASON_REPLICA_FENCED);
}

// The backup of a primary that went on alone, restarted empty: set up
// again as a backup under the next epoch.
void RestartBackup(Replica& backup, UpdateMode mode, uint64_t epoch, bool agreed = false) {
  DropJobRequest drop;
  drop.set_job_id("job");
  ASSERT_TRUE(backup.store.DropJob(drop).ok());
  CreateVariablesRequest request = Job(mode, agreed, REPLICA_ROLE_BACKUP, "");
  request.mutable_replica()->set_epoch(epoch);
  ASSERT_TRUE(backup.store.CreateVariables(request).ok());
}

// Asks the primary how its rebuild goes until the backup joined.
void AwaitJoined(Replica& primary, uint64_t epoch, const std::string& backup) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (;;) {
    absl::StatusOr<ChangeReplicaResponse> progress =
        primary.Change(REPLICA_ROLE_PRIMARY, epoch, backup);
    ASSERT_TRUE(progress.ok()) << progress.status();
    if (progress->backup_joined()) return;
    ASSERT_LT(absl::Now(), deadline) << "the rebuilt backup never joined";
    absl::SleepFor(absl::Milliseconds(5));
  }
}

TEST_F(ReplicationTest, ABackupIsRebuiltByStateTransferWhilePushesGoOn) {
  Start(UPDATE_MODE_ASYNC);
  for (uint64_t s = 1; s <= 3; ++s) ASSERT_EQ(Push(primary_.shard(), 0, s, 0, s, 7).outcome,
                                              PUSH_OUTCOME_APPLIED);
  // The backup is lost: the primary goes on alone, and more is applied.
  ASSERT_TRUE(primary_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());
  for (uint64_t s = 4; s <= 6; ++s) ASSERT_EQ(Push(primary_.shard(), 0, s, 0, s, 7).outcome,
                                              PUSH_OUTCOME_APPLIED);
  RestartBackup(backup_, UPDATE_MODE_ASYNC, 3);

  // One worker pushes all along; the rebuild neither stops nor loses it.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> pushed{0};
  std::thread pusher([&] {
    for (uint64_t s = 1; !stop.load(); ++s) {
      ASSERT_EQ(Push(primary_.shard(), 1, s, primary_.shard().version(), s, 8).outcome,
                PUSH_OUTCOME_APPLIED);
      pushed = s;
    }
  });
  absl::StatusOr<ChangeReplicaResponse> rebuilt =
      primary_.Change(REPLICA_ROLE_PRIMARY, 3, backup_.address);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_GT(rebuilt->state_bytes(), kElements * static_cast<int64_t>(sizeof(float)));
  AwaitJoined(primary_, 3, backup_.address);
  const uint64_t at_join = pushed.load();
  while (pushed.load() < at_join + 20) std::this_thread::yield();
  stop = true;
  pusher.join();

  // Joined: a push is on the backup when it is answered.
  ASSERT_EQ(Push(primary_.shard(), 0, 7, primary_.shard().version(), 7, 7).outcome,
            PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(backup_.shard().version(), primary_.shard().version());
  ExpectSameState();
  // The rebuilt backup knows pushes from before its restart.
  std::optional<PushReply> again = backup_.shard().DecidedBefore(PushKey{0, 1, 2});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->outcome, PUSH_OUTCOME_DUPLICATE);
  // And it can take over.
  ASSERT_TRUE(backup_.ChangeReplica(REPLICA_ROLE_PRIMARY, 4).ok());
  EXPECT_EQ(ReasonOf(Push(primary_.shard(), 0, 8, primary_.shard().version()).status),
            ERROR_REASON_NOT_PRIMARY);
}

TEST_F(ReplicationTest, TheCutOfARebuildWaitsForTheOpenSyncRound) {
  Start(UPDATE_MODE_SYNC);
  ASSERT_TRUE(primary_.ChangeReplica(REPLICA_ROLE_PRIMARY, 2).ok());
  ASSERT_EQ(Push(primary_.shard(), 1, 1, 0, 0, 7).outcome, PUSH_OUTCOME_AGGREGATED);
  RestartBackup(backup_, UPDATE_MODE_SYNC, 3);

  // A round that does not close by the deadline: no cut, nothing changed.
  ChangeReplicaRequest rebuild;
  rebuild.set_job_id("job");
  rebuild.mutable_replica()->set_role(REPLICA_ROLE_PRIMARY);
  rebuild.mutable_replica()->set_epoch(3);
  rebuild.mutable_replica()->set_backup_address(backup_.address);
  EXPECT_EQ(primary_.store.ChangeReplica(rebuild, absl::Now() + absl::Milliseconds(100))
                .status()
                .code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(primary_.store.replica().epoch(), 2);

  // The round closes while the rebuild waits: the cut comes after it.
  absl::StatusOr<ChangeReplicaResponse> rebuilt;
  std::thread rebuilding([&] { rebuilt = primary_.Change(REPLICA_ROLE_PRIMARY, 3, backup_.address); });
  absl::SleepFor(absl::Milliseconds(50));
  ASSERT_EQ(Push(primary_.shard(), 0, 1, 0, 0, 7).outcome, PUSH_OUTCOME_APPLIED);
  rebuilding.join();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  AwaitJoined(primary_, 3, backup_.address);
  for (int round = 1; round < 4; ++round) {
    EXPECT_EQ(Push(primary_.shard(), 1, round + 1, round, round, 7).outcome,
              PUSH_OUTCOME_AGGREGATED);
    EXPECT_EQ(Push(primary_.shard(), 0, round + 1, round, round, 7).outcome, PUSH_OUTCOME_APPLIED);
  }
  EXPECT_EQ(primary_.shard().version(), 4);
  ExpectSameState();
}

TEST_F(ReplicationTest, ADamagedStateIsRefusedAsDataLoss) {
  RestartBackup(backup_, UPDATE_MODE_ASYNC, 1);
  ReplicateRequest request;
  request.set_job_id("job");
  request.set_epoch(1);
  request.mutable_state()->set_total_bytes(8);
  request.mutable_state()->set_data("12345678");
  EXPECT_EQ(backup_.store.Replicate(request).status().code(), absl::StatusCode::kDataLoss);
  request.mutable_state()->set_offset(4);
  EXPECT_EQ(backup_.store.Replicate(request).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace pstrain
