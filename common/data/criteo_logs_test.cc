// Generated Criteo logs read back with the Criteo reader, plain and
// gzipped; the same seed and split give the same file; the true model's
// probabilities are informative (their AUC is what training can reach).

#include "common/data/criteo_logs.h"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/criteo_reader.h"
#include "common/evaluation/eval_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class CriteoLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/criteo_logs";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::unique_ptr<InMemorySource> Load(const std::string& path) {
    CriteoSource spec;
    spec.add_paths(path);
    spec.set_hash_buckets(1 << 20);
    auto source = LoadCriteo(spec);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *std::move(source) : nullptr;
  }

  PosixEnv env_;
  std::string dir_;
};

TEST_F(CriteoLogsTest, WritesWhatTheCriteoReaderReadsPlainAndGzipped) {
  CriteoLogsOptions options;
  options.num_examples = 3000;
  options.seed = 4;
  CriteoLogsTruth truth;
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/day_0.tsv", options, &truth).ok());
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/day_0.tsv.gz", options).ok());
  EXPECT_EQ(truth.probabilities.size(), 3000u);
  EXPECT_LT(std::filesystem::file_size(dir_ + "/day_0.tsv.gz"),
            std::filesystem::file_size(dir_ + "/day_0.tsv") / 2);
  std::unique_ptr<InMemorySource> plain = Load(dir_ + "/day_0.tsv");
  std::unique_ptr<InMemorySource> gzipped = Load(dir_ + "/day_0.tsv.gz");
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(gzipped, nullptr);
  EXPECT_EQ(plain->num_examples(), 3000);
  std::vector<int64_t> all(3000);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch a, b;
  ASSERT_TRUE(plain->Fill(all, &a).ok());
  ASSERT_TRUE(gzipped->Fill(all, &b).ok());
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.labels, truth.labels);
  EXPECT_EQ(a.sparse_ids, b.sparse_ids);
  // About a quarter click, as in the released data.
  const double clicks = std::accumulate(a.labels.begin(), a.labels.end(), 0.0);
  EXPECT_GT(clicks / 3000, 0.1);
  EXPECT_LT(clicks / 3000, 0.45);

  // Some of every kind of value: empty integers and categories, negative I2.
  const std::string text = Read(dir_ + "/day_0.tsv");
  EXPECT_THAT(text, ::testing::HasSubstr("\t\t"));
  int negative_i2 = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<absl::string_view> columns = absl::StrSplit(line, '\t');
    ASSERT_EQ(columns.size(), 40u) << line;
    negative_i2 += columns[2] == "-1";
  }
  EXPECT_GT(negative_i2, 0);
}

TEST_F(CriteoLogsTest, TheSameSeedAndSplitGiveTheSameFileAndTheTestSplitOthers) {
  CriteoLogsOptions options;
  options.num_examples = 500;
  options.seed = 9;
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/a.tsv", options).ok());
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/b.tsv", options).ok());
  options.test_split = true;
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/test.tsv", options).ok());
  EXPECT_EQ(Read(dir_ + "/a.tsv"), Read(dir_ + "/b.tsv"));
  EXPECT_NE(Read(dir_ + "/a.tsv"), Read(dir_ + "/test.tsv"));
}

TEST_F(CriteoLogsTest, TheTrueProbabilitiesPredictTheLabels) {
  CriteoLogsOptions options;
  options.num_examples = 20000;
  options.test_split = true;
  CriteoLogsTruth truth;
  ASSERT_TRUE(WriteCriteoLogs(env_, dir_ + "/test.tsv", options, &truth).ok());
  EvalMetricsOptions auc;
  auc.metrics = {"auc"};
  auc.kind = PredictionKind::kBinaryProbability;
  auc.width = 1;
  auto metrics = EvalMetrics::Create(auc);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_TRUE(metrics->Add(truth.probabilities, truth.labels, {}).ok());
  const double true_auc = metrics->Results().at("auc");
  std::printf("true model's AUC on 20000 test examples: %.4f\n", true_auc);
  EXPECT_GT(true_auc, 0.75);
  EXPECT_LT(true_auc, 0.95);  // not so easy that any model reaches it
}

TEST_F(CriteoLogsTest, RefusesBadOptions) {
  CriteoLogsOptions options;
  options.num_examples = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(WriteCriteoLogs(env_, dir_ + "/x.tsv", options)));
  options.num_examples = 1;
  options.zipf_exponent = 1;
  EXPECT_TRUE(absl::IsInvalidArgument(WriteCriteoLogs(env_, dir_ + "/x.tsv", options)));
  options.zipf_exponent = 1.1;
  EXPECT_FALSE(WriteCriteoLogs(env_, dir_ + "/no/such/folder/x.tsv", options).ok());
}

}  // namespace
}  // namespace pstrain
