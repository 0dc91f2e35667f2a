#ifndef PSTRAIN_EVALUATOR_TESTING_FAKE_CLUSTER_SERVICE_H_
#define PSTRAIN_EVALUATOR_TESTING_FAKE_CLUSTER_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/grpc_server.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace evaluator {

// The part of a coordinator an evaluator talks to, with what it was told
// recorded and what it streams set by the test: registration, heartbeats,
// one assignment (long-polled), a checkpoint stream per job, eval reports
// and lease releases. Serves on 127.0.0.1:0.
//
// A synchronous service on purpose: its long poll and its stream are
// blocking loops that re-check cancellation every few milliseconds, which
// keeps a test fake short. Thread-safe.
class FakeClusterService final : public ClusterService::Service {
 public:
  FakeClusterService() = default;
  ~FakeClusterService() override;

  absl::Status Start();
  const std::string& address() const { return server_->address(); }

  // What GetAssignment answers and heartbeats name as the job; answers a
  // long poll in progress.
  void SetAssignment(const Assignment& assignment);
  void SetShutdown(bool shutdown);
  // Queues a notification on `job_id`'s checkpoint stream.
  void Notify(const std::string& job_id, const CheckpointInfo& checkpoint);
  // Ends `job_id`'s checkpoint streams (OK) once their notifications are
  // sent; later streams of the job end at once.
  void EndCheckpoints(const std::string& job_id);

  // Blocks until `count` eval reports arrived or `timeout` (real time)
  // passed; returns the reports so far.
  std::vector<EvalReport> WaitForReports(size_t count, absl::Duration timeout) const;
  std::vector<EvalReport> reports() const;
  std::vector<int64_t> released() const;
  // Blocks until the checkpoint stream has sent `count` notifications.
  bool WaitForSent(int count, absl::Duration timeout) const;
  int registrations() const;

  grpc::Status Register(grpc::ServerContext* context, const RegisterRequest* request,
                        RegisterResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const HeartbeatRequest* request,
                         HeartbeatResponse* response) override;
  grpc::Status GetAssignment(grpc::ServerContext* context, const GetAssignmentRequest* request,
                             Assignment* response) override;
  grpc::Status ReportEval(grpc::ServerContext* context, const EvalReport* request,
                          EvalReportResponse* response) override;
  grpc::Status WatchCheckpoints(grpc::ServerContext* context,
                                const WatchCheckpointsRequest* request,
                                grpc::ServerWriter<CheckpointNotification>* writer) override;
  grpc::Status ReleaseCheckpoint(grpc::ServerContext* context,
                                 const ReleaseCheckpointRequest* request,
                                 ReleaseCheckpointResponse* response) override;

 private:
  std::unique_ptr<GrpcServer> server_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t incarnation_ ABSL_GUARDED_BY(mu_) = 0;
  Assignment assignment_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<CheckpointNotification> notifications_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> ended_jobs_ ABSL_GUARDED_BY(mu_);
  int sent_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<EvalReport> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> released_ ABSL_GUARDED_BY(mu_);
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_TESTING_FAKE_CLUSTER_SERVICE_H_
