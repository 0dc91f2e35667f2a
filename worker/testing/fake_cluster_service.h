#ifndef PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_
#define PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace worker {

// The cluster-internal part of a coordinator, as a worker sees it, with
// what it was told recorded and its answers set by the test: membership
// (NotFound for an unknown incarnation, Aborted on demand), one assignment,
// a queue of data leases, progress reports that answer stop on demand.
// Serves on 127.0.0.1:0. Thread-safe.
class FakeClusterService final : public ClusterService::CallbackService {
 public:
  FakeClusterService();
  ~FakeClusterService() override;

  absl::Status Start();
  const std::string& address() const { return address_; }
  void Shutdown();

  // Forgets every member, as a restarted coordinator would.
  void ForgetMembers();
  // The next `count` calls other than Register answer Aborted.
  void AbortNextCalls(int count);
  // The next `count` calls answer Unavailable.
  void UnavailableNextCalls(int count);
  void SetHeartbeatInterval(absl::Duration interval);
  // What GetAssignment answers (and heartbeats name as the job).
  void SetAssignment(const Assignment& assignment);
  void SetShutdown(bool shutdown);
  // Leases handed out in order; when none is left, AcquireDataLease
  // answers a lease with end_of_data.
  void AddLease(int64_t lease_id, int64_t begin, int64_t end, int32_t epoch = 0);
  // A lease of deterministic sync mode, whose batch k is this worker's
  // part of round first_round + k.
  void AddLeaseFromRound(int64_t lease_id, int64_t begin, int64_t end, int64_t first_round);
  // ReportProgress answers stop once this many reports were counted (0:
  // never), and always once a lease with end_of_data was handed out, as a
  // coordinator stops a job whose data is used up.
  void StopAfterReports(int reports);

  int registrations() const;
  uint64_t incarnation_of(int worker) const;
  int heartbeats() const;
  std::vector<ProgressReport> reports() const;
  std::vector<CompleteDataLeaseRequest> completions() const;
  int64_t global_step() const;
  // Blocks until `count` completions arrived or `timeout`; returns whether
  // they did.
  bool WaitForCompletions(int count, absl::Duration timeout) const;

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const RegisterRequest* request,
                                     RegisterResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const HeartbeatRequest* request,
                                      HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* GetAssignment(grpc::CallbackServerContext* context,
                                          const GetAssignmentRequest* request,
                                          Assignment* response) override;
  grpc::ServerUnaryReactor* ReportProgress(grpc::CallbackServerContext* context,
                                           const ProgressReport* request,
                                           ProgressResponse* response) override;
  grpc::ServerUnaryReactor* AcquireDataLease(grpc::CallbackServerContext* context,
                                             const AcquireDataLeaseRequest* request,
                                             DataLease* response) override;
  grpc::ServerUnaryReactor* CompleteDataLease(grpc::CallbackServerContext* context,
                                              const CompleteDataLeaseRequest* request,
                                              CompleteDataLeaseResponse* response) override;

 private:
  // OK if `incarnation` holds `task`; NotFound, Aborted otherwise.
  absl::Status CheckCaller(const TaskId& task, uint64_t incarnation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  mutable absl::Mutex mu_;
  std::map<int, uint64_t> members_ ABSL_GUARDED_BY(mu_);
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int abort_next_ ABSL_GUARDED_BY(mu_) = 0;
  int unavailable_next_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(50);
  Assignment assignment_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<DataLease> leases_ ABSL_GUARDED_BY(mu_);
  int stop_after_reports_ ABSL_GUARDED_BY(mu_) = 0;
  bool end_of_data_ ABSL_GUARDED_BY(mu_) = false;
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<ProgressReport> reports_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> counted_sequence_ ABSL_GUARDED_BY(mu_);
  int counted_reports_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<CompleteDataLeaseRequest> completions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_
