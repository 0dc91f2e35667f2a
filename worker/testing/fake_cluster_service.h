#ifndef PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_
#define PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace worker {

// The data leases of a coordinator in deterministic sync mode, scripted by
// the test: leases that start at a later round, as a worker gets when it
// takes up the lease of a worker lost mid-way, which the real coordinator
// hands out only after that loss. Answers Register, AcquireDataLease (the
// scripted leases in order, then end_of_data), CompleteDataLease
// (recorded) and ReportProgress (stop once the data ran out); any other
// call is Unimplemented. Serves on 127.0.0.1:0. Thread-safe.
class FakeClusterService final : public ClusterService::CallbackService {
 public:
  FakeClusterService();
  ~FakeClusterService() override;

  absl::Status Start();
  const std::string& address() const { return address_; }
  void Shutdown();

  // A lease whose batch k is this worker's part of round first_round + k.
  void AddLeaseFromRound(int64_t lease_id, int64_t begin, int64_t end, int64_t first_round);

  std::vector<CompleteDataLeaseRequest> completions() const;

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const RegisterRequest* request,
                                     RegisterResponse* response) override;
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
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  mutable absl::Mutex mu_;
  std::deque<DataLease> leases_ ABSL_GUARDED_BY(mu_);
  bool end_of_data_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<CompleteDataLeaseRequest> completions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TESTING_FAKE_CLUSTER_SERVICE_H_
