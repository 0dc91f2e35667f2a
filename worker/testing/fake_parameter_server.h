#ifndef PSTRAIN_WORKER_TESTING_FAKE_PARAMETER_SERVER_H_
#define PSTRAIN_WORKER_TESTING_FAKE_PARAMETER_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace worker {

// One shard of a parameter server, small enough to see through: it speaks
// the PushPull protocol (chunked tensors, multi-part pushes over several
// streams, tags, exactly-once by PushId), applies every accepted push as
// plain SGD with learning rate 0.1, and records what it received. Tests
// steer it: drop the reply of a push after applying it, or decide a push's
// outcome (STALE). Serves on 127.0.0.1:0. Thread-safe.
class FakeParameterServer final : public ParameterServer::CallbackService {
 public:
  FakeParameterServer(int shard_index, int num_shards);
  ~FakeParameterServer() override;

  // Starts serving; address() is valid after it.
  absl::Status Start();
  const std::string& address() const { return address_; }
  void Shutdown();

  // Variables this shard holds. A table's row id reads as 0.01 * (id % 7)
  // in every column until a push updates it.
  void AddDense(const std::string& name, std::vector<int64_t> shape, std::vector<float> values);
  void AddTable(const std::string& name, int64_t dim);

  // Bytes per pulled message. Default 1 MiB.
  void set_pull_chunk_bytes(int64_t bytes);
  // The push with this sequence number is applied, then its stream ends
  // with UNAVAILABLE instead of an answer: the reply is lost. Once.
  void DropReplyOf(uint64_t sequence);
  // Every part of the push with this sequence number is answered REJECTED
  // with `status` at its first message, as a shard does when a piece fails
  // its checks; the part's later messages are read and dropped until its
  // end_of_push, and nothing more is answered.
  void RefuseEarly(uint64_t sequence, absl::Status status);
  // Parts refused early whose end_of_push has arrived since, and the
  // messages read of refused parts.
  int refused_parts_ended() const;
  int refused_messages() const;
  // PushPull streams opened so far.
  int streams_opened() const;
  // Decides a push's outcome instead of APPLIED when it returns one
  // (STALE, REJECTED with Aborted, ...). Called for new pushes only.
  void SetOutcome(std::function<std::optional<PushResult>(const PushRequest&)> outcome);

  // A complete push as it arrived (every attempt, retries included).
  struct ReceivedPush {
    PushId id;
    int64_t base_version = 0;
    int64_t examples = 0;
    // The records the gradients came from, if the push named them.
    std::optional<PushOrigin> origin;
    int num_parts = 1;
    int messages = 0;
    PushOutcome outcome = PUSH_OUTCOME_UNSPECIFIED;
    std::map<std::string, std::vector<float>> dense;
    // Table -> id -> row.
    std::map<std::string, std::map<int64_t, std::vector<float>>> rows;
  };
  std::vector<ReceivedPush> received() const;
  // Pushes applied (once each).
  int applied() const;
  int64_t version() const;
  // Sets the version, as if that many updates had been applied before.
  void SetVersion(int64_t version);
  std::vector<float> dense(const std::string& name) const;
  int pulls() const;
  // Largest number of messages seen on one stream for one push part.
  int64_t largest_message_bytes() const;

  grpc::ServerBidiReactor<PushPullRequest, PushPullResponse>* PushPull(
      grpc::CallbackServerContext* context) override;

 private:
  friend class FakePushPullStream;
  using Key = std::tuple<int32_t, uint64_t, uint64_t>;

  struct Pending {
    ReceivedPush push;
    std::set<int> parts_done;
    std::map<std::string, int64_t> dense_bytes;
  };

  struct Table {
    int64_t dim = 0;
    std::map<int64_t, std::vector<float>> rows;
  };

  // Handles one push message. Returns the answer to send, if any, and
  // whether to drop the stream instead.
  std::optional<PushResult> OnPushMessage(const PushRequest& message, bool* drop);
  // The answer to a pull: messages, or an error.
  std::vector<PushPullResponse> OnPull(uint64_t tag, const PullRequest& pull);
  std::vector<float> Row(const Table& table, int64_t id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int shard_index_;
  const int num_shards_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> dense_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, Table> tables_ ABSL_GUARDED_BY(mu_);
  int64_t pull_chunk_bytes_ ABSL_GUARDED_BY(mu_) = 1 << 20;
  std::set<uint64_t> drop_ ABSL_GUARDED_BY(mu_);
  std::function<std::optional<PushResult>(const PushRequest&)> outcome_ ABSL_GUARDED_BY(mu_);
  std::map<Key, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::map<Key, PushOutcome> decided_ ABSL_GUARDED_BY(mu_);
  std::vector<ReceivedPush> received_ ABSL_GUARDED_BY(mu_);
  int applied_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  int pulls_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t largest_message_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, absl::Status> refuse_early_ ABSL_GUARDED_BY(mu_);
  // Refused parts still open: (push key, part).
  std::set<std::pair<Key, int>> refused_open_ ABSL_GUARDED_BY(mu_);
  int refused_parts_ended_ ABSL_GUARDED_BY(mu_) = 0;
  int refused_messages_ ABSL_GUARDED_BY(mu_) = 0;
  int streams_opened_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TESTING_FAKE_PARAMETER_SERVER_H_
