#ifndef PSTRAIN_COMMON_NET_RAW_PUSH_PULL_SERVICE_H_
#define PSTRAIN_COMMON_NET_RAW_PUSH_PULL_SERVICE_H_

#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {

// The ParameterServer callback service with PushPull on raw ByteBuffers
// (the service parses requests and serialises answers itself, so that
// tensor values travel in slices of their own) and every other method
// typed. The shard's service derives from it; the token guard wraps it.
using RawPushPullParameterServer = ParameterServer::WithCallbackMethod_CreateVariables<
    ParameterServer::WithCallbackMethod_DropJob<ParameterServer::WithRawCallbackMethod_PushPull<
        ParameterServer::WithCallbackMethod_Pull<ParameterServer::WithCallbackMethod_Snapshot<
            ParameterServer::WithCallbackMethod_Restore<
                ParameterServer::WithCallbackMethod_ReadPushLedger<
                    ParameterServer::WithCallbackMethod_OpenLane<
                        ParameterServer::WithCallbackMethod_CommitRound<
                            ParameterServer::WithCallbackMethod_Replicate<
                                ParameterServer::WithCallbackMethod_ChangeReplica<
                                    ParameterServer::Service>>>>>>>>>>>;

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_RAW_PUSH_PULL_SERVICE_H_
