#include "bench/sim/sim_channels.h"

namespace pstrain {
namespace bench {

std::shared_ptr<grpc::Channel> SimChannel(const std::string& address, int number) {
  grpc::ChannelArguments arguments;
  arguments.SetInt("pstrain.sim_channel", number);
  arguments.SetMaxReceiveMessageSize(64 << 20);
  arguments.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
}

}  // namespace bench
}  // namespace pstrain
