#ifndef PSTRAIN_BENCH_SIM_SIM_CHANNELS_H_
#define PSTRAIN_BENCH_SIM_SIM_CHANNELS_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"

namespace pstrain {
namespace bench {

// Insecure channel number `number` to `address`: a connection of its own
// (channels with equal arguments would share one), taking answers of any
// size the shards send.
std::shared_ptr<grpc::Channel> SimChannel(const std::string& address, int number);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_CHANNELS_H_
