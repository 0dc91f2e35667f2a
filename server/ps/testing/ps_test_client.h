#ifndef PSTRAIN_SERVER_PS_TESTING_PS_TEST_CLIENT_H_
#define PSTRAIN_SERVER_PS_TESTING_PS_TEST_CLIENT_H_

// Test helpers that speak the ParameterServer protocol as a worker would:
// building chunked push messages and running a PushPull stream.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {

PushId MakePushId(int32_t worker, uint64_t incarnation, uint64_t sequence);

// The messages of one push of a dense gradient, its bytes split into
// chunks of at most chunk_bytes (no chunk when it fits one), all under
// `tag`; the last has end_of_push. With num_parts > 1, only the chunks
// i with i % num_parts == part are included, marked as that part.
std::vector<PushPullRequest> DensePushMessages(const std::string& job, const PushId& id,
                                               int64_t base_version, const std::string& name,
                                               const std::vector<int64_t>& shape,
                                               absl::Span<const float> values, int64_t chunk_bytes,
                                               uint64_t tag, int num_parts = 1, int part = 0);

// One message pushing rows of a table.
PushPullRequest RowsPushMessage(const std::string& job, const PushId& id, int64_t base_version,
                                const std::string& name, int64_t row_width,
                                absl::Span<const int64_t> ids, absl::Span<const float> values,
                                uint64_t tag);

PushPullRequest PullMessage(const std::string& job, const std::vector<std::string>& names,
                            uint64_t tag, int64_t min_version = 0, int64_t wait_ms = 0);

// Writes `requests` on one PushPull stream (from another thread, so a
// shard that stops reading cannot deadlock the test), closes the sending
// side, and returns every response with the stream's final status.
struct StreamResult {
  std::vector<PushPullResponse> responses;
  grpc::Status status;
};
StreamResult RunStream(ParameterServer::Stub& stub, const std::vector<PushPullRequest>& requests,
                       absl::Duration timeout = absl::Seconds(30));

// Reassembles the dense values of `name` from pull answers (whole or
// chunked); empty when absent.
// (float32 or bfloat16 answers, widened.)
std::vector<float> DenseValues(const std::vector<PushPullResponse>& responses,
                               const std::string& name);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_TESTING_PS_TEST_CLIENT_H_
