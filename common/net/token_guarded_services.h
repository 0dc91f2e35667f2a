#ifndef PSTRAIN_COMMON_NET_TOKEN_GUARDED_SERVICES_H_
#define PSTRAIN_COMMON_NET_TOKEN_GUARDED_SERVICES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/net/token_auth.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace pstrain {

// A service to register in place of `service` (JobService, ClusterService
// or ParameterServer, borrowed) that checks each call's bearer token with
// `authenticator` (borrowed) before handing it on, and finishes refused
// calls with the check's status. JobService's SubmitJob, StopJob, Shutdown
// and ExportModel are kClientAdmin, its other calls kClientRead; every
// ClusterService and ParameterServer call is kCluster. A method added to a
// service later is refused as UNIMPLEMENTED until it is listed here.
// InvalidArgument: a service of another type (nothing to check it against).
absl::StatusOr<std::unique_ptr<grpc::Service>> GuardWithTokens(
    grpc::Service* service, const TokenAuthenticator& authenticator);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_TOKEN_GUARDED_SERVICES_H_
