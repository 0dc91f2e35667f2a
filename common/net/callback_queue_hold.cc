#include "common/net/callback_queue_hold.h"

namespace pstrain {

std::unique_ptr<CallbackQueueHold> CallbackQueueHold::Start() {
  std::unique_ptr<CallbackQueueHold> hold(new CallbackQueueHold());
  grpc::ServerBuilder builder;
  builder.RegisterCallbackGenericService(&hold->service_);
  hold->server_ = builder.BuildAndStart();
  if (hold->server_ == nullptr) return nullptr;
  return hold;
}

CallbackQueueHold::~CallbackQueueHold() { server_->Shutdown(); }

}  // namespace pstrain
