#ifndef PSTRAIN_SERVER_PS_PULL_ANSWER_WIRE_H_
#define PSTRAIN_SERVER_PS_PULL_ANSWER_WIRE_H_

// A pull answer on the PushPull stream serialised for gRPC with the values
// of its dense pieces in slices of their own: PullCursor reads them straight
// into those slices, so the shard copies each value once (out of the
// variable) instead of three times (into the message, into gRPC's buffer).

#include <cstdint>
#include <utility>
#include <vector>

#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// Values of dense pieces kept out of a PullResponse: (index in values(),
// the bytes), by increasing index.
using PulledSlices = std::vector<std::pair<int, grpc::Slice>>;

// A slice of `bytes` uninitialised bytes, on the heap (never inlined, so
// its data stays put when the slice is moved), for PullCursor to fill.
grpc::Slice NewValueSlice(int64_t bytes);

// The wire form of PushPullResponse{tag, pull} where the dense values named
// in `slices` (whose `data` in `pull` is empty) hold those slices: byte for
// byte the serialisation of the message with the data set.
grpc::ByteBuffer PullAnswerBytes(uint64_t tag, const PullResponse& pull, PulledSlices slices);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PULL_ANSWER_WIRE_H_
