#ifndef PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_
#define PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_

// Fakes for testing the coordinator against real gRPC without parameter
// servers: a ParameterServer service that writes and checks snapshot files
// the way a shard does, and a JobPlanner with a fixed plan.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/net/grpc_server.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/coordinator/job_planner.h"

namespace pstrain {
namespace coordinator {

// A parameter-server shard that keeps no variables: it records the calls it
// gets, writes a small file for each Snapshot (and reports its size and
// CRC32C as a shard does), and checks the file of each Restore against the
// expected size and CRC32C. Serves itself on 127.0.0.1:0. Thread-safe.
class FakeShard final : public ParameterServer::CallbackService {
 public:
  // Starts serving; CHECK-fails if it cannot.
  FakeShard();
  ~FakeShard() override;

  const std::string& address() const { return server_->address(); }

  std::vector<CreateVariablesRequest> created() const;
  std::vector<std::string> dropped() const;
  std::vector<RestoreRequest> restored() const;
  int snapshots() const;
  // The push ledger ReadPushLedger and Snapshot answer with (default:
  // empty), and the ReadPushLedger requests received.
  void SetLedger(PushLedger ledger);
  std::vector<ReadPushLedgerRequest> ledger_reads() const;

  grpc::ServerUnaryReactor* CreateVariables(grpc::CallbackServerContext* context,
                                            const CreateVariablesRequest* request,
                                            CreateVariablesResponse* response) override;
  grpc::ServerUnaryReactor* DropJob(grpc::CallbackServerContext* context,
                                    const DropJobRequest* request,
                                    DropJobResponse* response) override;
  grpc::ServerUnaryReactor* Snapshot(grpc::CallbackServerContext* context,
                                     const SnapshotRequest* request,
                                     SnapshotResponse* response) override;
  grpc::ServerUnaryReactor* Restore(grpc::CallbackServerContext* context,
                                    const RestoreRequest* request,
                                    RestoreResponse* response) override;
  grpc::ServerUnaryReactor* ReadPushLedger(grpc::CallbackServerContext* context,
                                           const ReadPushLedgerRequest* request,
                                           PushLedger* response) override;

 private:
  mutable absl::Mutex mu_;
  std::vector<CreateVariablesRequest> created_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> dropped_ ABSL_GUARDED_BY(mu_);
  std::vector<RestoreRequest> restored_ ABSL_GUARDED_BY(mu_);
  int snapshots_ ABSL_GUARDED_BY(mu_) = 0;
  PushLedger ledger_ ABSL_GUARDED_BY(mu_);
  std::vector<ReadPushLedgerRequest> ledger_reads_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<GrpcServer> server_;
};

// Plans every job as two dense variables and one embedding table over
// `num_records` records, without reading data or building a model.
class FakePlanner final : public JobPlanner {
 public:
  explicit FakePlanner(int64_t num_records = 10000) : num_records_(num_records) {}
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override;

 private:
  const int64_t num_records_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_COORDINATOR_TEST_UTIL_H_
