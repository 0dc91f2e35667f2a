#include "server/coordinator/coordinator_test_util.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/checksum/crc32c.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

FakeShard::FakeShard() {
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start({}, {this});
  CHECK(server.ok()) << server.status();
  server_ = *std::move(server);
}

FakeShard::~FakeShard() { server_->Shutdown(absl::ZeroDuration()); }

std::vector<CreateVariablesRequest> FakeShard::created() const {
  absl::MutexLock lock(&mu_);
  return created_;
}

std::vector<std::string> FakeShard::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

std::vector<RestoreRequest> FakeShard::restored() const {
  absl::MutexLock lock(&mu_);
  return restored_;
}

int FakeShard::snapshots() const {
  absl::MutexLock lock(&mu_);
  return snapshots_;
}

grpc::ServerUnaryReactor* FakeShard::CreateVariables(grpc::CallbackServerContext* context,
                                                     const CreateVariablesRequest* request,
                                                     CreateVariablesResponse* /*response*/) {
  absl::MutexLock lock(&mu_);
  created_.push_back(*request);
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* FakeShard::DropJob(grpc::CallbackServerContext* context,
                                             const DropJobRequest* request,
                                             DropJobResponse* /*response*/) {
  absl::MutexLock lock(&mu_);
  dropped_.push_back(request->job_id());
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* FakeShard::Snapshot(grpc::CallbackServerContext* context,
                                              const SnapshotRequest* request,
                                              SnapshotResponse* response) {
  const std::string contents =
      absl::StrCat("shard of ", request->job_id(), " at step ", request->global_step(), "\n");
  std::ofstream out(request->path(), std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) {
    return Done(context, grpc::Status(grpc::StatusCode::INTERNAL,
                                      absl::StrCat("cannot write ", request->path())));
  }
  response->set_path(request->path());
  response->set_bytes(static_cast<int64_t>(contents.size()));
  response->set_crc32c(Crc32c(contents));
  absl::MutexLock lock(&mu_);
  *response->mutable_ledger() = ledger_;
  ++snapshots_;
  return Done(context, grpc::Status::OK);
}

void FakeShard::SetLedger(PushLedger ledger) {
  absl::MutexLock lock(&mu_);
  ledger_ = std::move(ledger);
}

std::vector<ReadPushLedgerRequest> FakeShard::ledger_reads() const {
  absl::MutexLock lock(&mu_);
  return ledger_reads_;
}

grpc::ServerUnaryReactor* FakeShard::ReadPushLedger(grpc::CallbackServerContext* context,
                                                    const ReadPushLedgerRequest* request,
                                                    PushLedger* response) {
  absl::MutexLock lock(&mu_);
  ledger_reads_.push_back(*request);
  *response = ledger_;
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* FakeShard::Restore(grpc::CallbackServerContext* context,
                                             const RestoreRequest* request,
                                             RestoreResponse* /*response*/) {
  std::ifstream in(request->path(), std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  if (!in) {
    return Done(context, grpc::Status(grpc::StatusCode::NOT_FOUND,
                                      absl::StrCat("cannot read ", request->path())));
  }
  const std::string bytes = contents.str();
  if (static_cast<int64_t>(bytes.size()) != request->expected_bytes() ||
      Crc32c(bytes) != request->expected_crc32c()) {
    return Done(context, grpc::Status(grpc::StatusCode::DATA_LOSS,
                                      absl::StrCat(request->path(), " differs from its MANIFEST")));
  }
  absl::MutexLock lock(&mu_);
  restored_.push_back(*request);
  return Done(context, grpc::Status::OK);
}

absl::StatusOr<JobPlan> FakePlanner::Plan(const JobSpec& /*spec*/) {
  JobPlan plan;
  VariableSpec w;
  w.set_name("w");
  w.set_kind(VARIABLE_KIND_DENSE);
  w.mutable_shape()->add_dims(16);
  w.mutable_shape()->add_dims(4);
  plan.variables.push_back(w);
  VariableSpec b;
  b.set_name("b");
  b.set_kind(VARIABLE_KIND_DENSE);
  b.mutable_shape()->add_dims(4);
  plan.variables.push_back(b);
  VariableSpec table;
  table.set_name("emb");
  table.set_kind(VARIABLE_KIND_EMBEDDING);
  table.mutable_shape()->add_dims(0);
  table.mutable_shape()->add_dims(8);
  plan.variables.push_back(table);
  plan.num_records = num_records_;
  plan.description = "a fake model";
  return plan;
}

}  // namespace coordinator
}  // namespace pstrain
