#include "client/tfjob_manifest.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// That kubectl reads the manifest, and that its pods run the job, is
// checked in tests/k8s_manifests_test and tests/k8s_run_test.

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TfJobManifestOptions Options() {
  TfJobManifestOptions options;
  options.name = "clicks";
  options.num_ps = 2;
  options.num_workers = 3;
  options.spec_text = "name: \"clicks\"\n";
  options.command_line = "pstrain k8s clicks.pbtxt";
  return options;
}

TEST(TfJobNameForTest, KeepsWhatANameMayHold) {
  EXPECT_EQ(TfJobNameFor("Fashion MNIST_mlp!"), "fashion-mnist-mlp");
  EXPECT_EQ(TfJobNameFor("42-clicks"), "clicks");
  EXPECT_EQ(TfJobNameFor("---"), "pstrain-job");
  EXPECT_EQ(TfJobNameFor(""), "pstrain-job");
  const std::string name = TfJobNameFor(std::string(30, 'a') + "-" + std::string(30, 'b'));
  EXPECT_LE(name.size(), static_cast<size_t>(kMaxTfJobNameLength));
  EXPECT_TRUE(CheckDnsLabel(name, "name").ok()) << name;
}

TEST(CheckDnsLabelTest, NamesTheRuleBroken) {
  EXPECT_TRUE(CheckDnsLabel("clicks-2", "the TFJob's name").ok());
  EXPECT_EQ(CheckDnsLabel("Clicks", "the TFJob's name").message(),
            "the TFJob's name 'Clicks' must start with a lowercase letter");
  EXPECT_EQ(CheckDnsLabel("clicks-", "the name").message(),
            "the name 'clicks-' must not end with '-'");
  EXPECT_EQ(CheckDnsLabel("a_b", "the name").message(),
            "the name 'a_b' may hold only lowercase letters, digits and '-'");
  EXPECT_EQ(CheckDnsLabel("abcdef", "the name", 5).message(),
            "the name 'abcdef' is longer than 5 characters");
  EXPECT_EQ(CheckDnsLabel("", "the name").message(), "the name is empty");
}

TEST(TfJobManifestTest, RunsTheSpecOnceWithEveryReplica) {
  absl::StatusOr<std::string> manifest = TfJobManifest(Options());
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_THAT(*manifest, HasSubstr("kind: ConfigMap\nmetadata:\n  name: clicks-job\n"));
  EXPECT_THAT(*manifest, HasSubstr("kind: TFJob\nmetadata:\n  name: clicks\n"));
  EXPECT_THAT(*manifest,
              HasSubstr("    Chief:\n      replicas: 1\n      restartPolicy: ExitCode\n"));
  EXPECT_THAT(*manifest, HasSubstr("    PS:\n      replicas: 2\n"));
  EXPECT_THAT(*manifest, HasSubstr("    Worker:\n      replicas: 3\n"));
  EXPECT_THAT(*manifest, HasSubstr("    Evaluator:\n      replicas: 1\n"));
  EXPECT_THAT(*manifest, HasSubstr("- --job=/etc/pstrain/job/job.pbtxt\n"));
  EXPECT_THAT(*manifest, HasSubstr("                name: clicks-job\n"));
  EXPECT_THAT(*manifest, HasSubstr("claimName: pstrain-model-dir\n"));
  EXPECT_THAT(*manifest, HasSubstr("image: \"pstrain:latest\"\n"));
  EXPECT_THAT(*manifest, Not(HasSubstr("ttlSecondsAfterFinished")));
  EXPECT_THAT(*manifest, Not(HasSubstr("namespace:")));
  EXPECT_THAT(*manifest, Not(HasSubstr("--tls_cert")));
}

TEST(TfJobManifestTest, KeepsTheSpecAsWritten) {
  TfJobManifestOptions options = Options();
  // A first line that starts with spaces, a blank line, a comment, CRLF.
  options.spec_text = "  name: \"clicks\"\r\n\n# a comment: kept\r\nmode: JOB_MODE_TRAIN\n";
  absl::StatusOr<std::string> manifest = TfJobManifest(options);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_THAT(*manifest, HasSubstr("data:\n  job.pbtxt: |2\n      name: \"clicks\"\n\n"
                                   "    # a comment: kept\n    mode: JOB_MODE_TRAIN\n"));
}

TEST(TfJobManifestTest, TakesOptionsAsGiven) {
  TfJobManifestOptions options = Options();
  options.namespace_name = "ml-team";
  options.evaluator = false;
  options.tls_secret = "pstrain-tls";
  options.tokens_secret = "pstrain-tokens";
  options.ttl_secs = 3600;
  options.spec_key = "job.json";
  options.image = "registry.example.com:5000/pstrain@sha256:0123";
  absl::StatusOr<std::string> manifest = TfJobManifest(options);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_THAT(*manifest, HasSubstr("  namespace: ml-team\n"));
  EXPECT_THAT(*manifest, Not(HasSubstr("Evaluator:")));
  EXPECT_THAT(*manifest, HasSubstr("- --tls_client_auth=require\n"));
  EXPECT_THAT(*manifest, HasSubstr("- --cluster_token_file=/etc/pstrain/tokens/cluster-token\n"));
  EXPECT_THAT(*manifest, HasSubstr("secretName: pstrain-tls\n"));
  EXPECT_THAT(*manifest, HasSubstr("ttlSecondsAfterFinished: 3600\n"));
  EXPECT_THAT(*manifest, HasSubstr("- --job=/etc/pstrain/job/job.json\n"));
  EXPECT_THAT(*manifest, HasSubstr("image: \"registry.example.com:5000/pstrain@sha256:0123\"\n"));
}

TEST(TfJobManifestTest, RefusesWhatKubernetesWould) {
  TfJobManifestOptions options = Options();
  options.name = "Clicks";
  EXPECT_THAT(TfJobManifest(options).status().message(),
              HasSubstr("the TFJob's name 'Clicks' must start with a lowercase letter"));
  options = Options();
  options.image = "pstrain latest";
  EXPECT_EQ(TfJobManifest(options).status().message(),
            "the image 'pstrain latest' is not an image reference");
  options = Options();
  options.volume_claim = "Model_Dir";
  EXPECT_EQ(TfJobManifest(options).status().message(),
            "the volume claim 'Model_Dir' is not a Kubernetes object name");
  options = Options();
  options.num_workers = 0;
  EXPECT_EQ(TfJobManifest(options).status().message(),
            "a job needs a parameter server and a worker; got 2 and 0");
  options = Options();
  options.spec_text = "name: \"a\"\nmode: \x01\n";
  EXPECT_EQ(TfJobManifest(options).status().message(),
            "the job spec has a control character (byte 1) on line 2, which a ConfigMap cannot "
            "hold");
}

}  // namespace
}  // namespace pstrain
