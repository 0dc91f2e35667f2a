#ifndef PSTRAIN_SERVER_PS_TESTING_WIRED_SHARD_H_
#define PSTRAIN_SERVER_PS_TESTING_WIRED_SHARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/in_process_shard.h"
#include "server/ps/shard_store.h"
#include "server/ps/testing/faulty_wire.h"

namespace pstrain {

// A real parameter-server shard in the test's process (InProcessShard: the
// store, the service and a gRPC server as pstrain-ps runs them) that
// clients reach through a FaultyWire in front of it: address() is the
// wire's. For testing the worker, and whoever else talks to shards, against
// the shard they talk to in production, with the faults the test asks the
// wire for. Not thread-safe to construct or destroy; the rest is.
class WiredShard {
 public:
  // Internal: the shard or the wire cannot listen on 127.0.0.1.
  static absl::StatusOr<std::unique_ptr<WiredShard>> Start(InProcessShardOptions options = {});

  WiredShard(const WiredShard&) = delete;
  WiredShard& operator=(const WiredShard&) = delete;

  // Where clients connect: the wire.
  const std::string& address() const { return wire_->address(); }
  FaultyWire& wire() { return *wire_; }
  ShardStore& store() { return shard_->store(); }

  // Sets up a job here, as the coordinator's CreateVariables does.
  absl::Status Create(const CreateVariablesRequest& request);

  // Applies `push` (one message, end_of_push set) as if another worker had
  // sent it, without the wire; the shard's answer.
  PushResult PushFromElsewhere(PushRequest push);

  // What the shard holds of job `job_id`, read from its store (not over the
  // wire). Each adds a test failure and answers empty (0) when the job or
  // the variable is not here.
  std::vector<float> Dense(const std::string& job_id, const std::string& name);
  std::vector<float> Row(const std::string& job_id, const std::string& table, int64_t id);
  int64_t Version(const std::string& job_id);
  // The job's push ledger: the pushes the shard applied.
  PushLedger Ledger(const std::string& job_id);

  // The shard's host is gone: the wire stops serving (see
  // FaultyWire::Shutdown).
  void Shutdown() { wire_->Shutdown(); }

 private:
  WiredShard() = default;

  std::unique_ptr<InProcessShard> shard_;
  std::unique_ptr<FaultyWire> wire_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_TESTING_WIRED_SHARD_H_
