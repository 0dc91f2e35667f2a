// Linked into the tests that render deploy/k8s with the kubectl on PATH: a
// global environment that checks first that it can (kubectl 1.21 or later,
// whose kustomize reads the manifests' `patches` and `replicas`), and
// otherwise skips every test of the binary saying so (fails under CI).
// Debian 12's kubernetes-client is 1.20 and cannot.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/k8s_manifest.h"
#include "tests/machine_requirement.h"

namespace pstrain {
namespace {

// Why the kubectl on PATH cannot render the dev overlay, as the tests
// render it; "" when it can.
std::string KubectlLacks() {
  if (!k8s_testing::RunShell("command -v kubectl").ok()) {
    return "these tests render deploy/k8s with kubectl 1.21 or later (kustomize v4); there is "
           "no kubectl on PATH. Debian 12's kubernetes-client (1.20) cannot render them either; "
           "install kubectl from Kubernetes' own packages";
  }
  absl::StatusOr<std::vector<google::protobuf::Value>> rendered =
      k8s_testing::RenderManifests("overlays/dev");
  if (rendered.ok()) return "";
  return absl::StrCat(
      "these tests render deploy/k8s with kubectl 1.21 or later (kustomize v4), which this "
      "machine lacks: ",
      absl::StripTrailingAsciiWhitespace(rendered.status().message()),
      ". Debian 12's kubernetes-client (1.20) cannot render them; install kubectl from "
      "Kubernetes' own packages");
}

class KubectlEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { PSTRAIN_REQUIRE_MACHINE(KubectlLacks()); }
};

const ::testing::Environment* const kKubectl =
    ::testing::AddGlobalTestEnvironment(new KubectlEnvironment);

}  // namespace
}  // namespace pstrain
