#ifndef PSTRAIN_CLIENT_K8S_COMMAND_H_
#define PSTRAIN_CLIENT_K8S_COMMAND_H_

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain k8s JOB.pbtxt`: writes one training run as a Kubeflow TFJob and
// the ConfigMap holding its spec (tfjob_manifest.h), for `kubectl apply -f`.
Subcommand K8sCommand();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_K8S_COMMAND_H_
