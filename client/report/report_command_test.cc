#include "client/report/report_command.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/report/html_report.h"
#include "client/report/report_data.h"
#include "client/report/testing/xml_check.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "common/summary/scalar_jsonl.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_string(to);

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(absl::string_view text, absl::string_view what) {
  int count = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTestDir(env_);
    // A name that needs escaping everywhere it appears.
    model_dir_ = JoinPath(dir_, "run <1> & 'x'");
    ASSERT_TRUE(CreateDirs(env_, model_dir_).ok());
  }

  void WriteScalars(const std::string& sub, const std::vector<ScalarRecord>& records) {
    std::string text;
    for (const ScalarRecord& record : records) text += FormatScalarJsonLine(record);
    ASSERT_TRUE(CreateDirs(env_, JoinPath(model_dir_, sub)).ok());
    ASSERT_TRUE(WriteTestFile(env_, JoinPath(model_dir_, sub + "/scalars.jsonl"), text).ok());
  }

  // What the coordinator writes over 3000 steps, with a NaN and an infinite
  // loss among them.
  void WriteTrainingRun() {
    std::vector<ScalarRecord> train;
    for (int64_t step = 100; step <= 3000; step += 100) {
      const double t = 1700000000 + step / 10.0;
      const double loss = step == 1500   ? std::numeric_limits<double>::quiet_NaN()
                          : step == 1600 ? std::numeric_limits<double>::infinity()
                                         : 0.3 + 2.0 * std::exp(-step / 500.0);
      train.push_back({step, t, "loss", loss});
      train.push_back({step, t, "learning_rate", step < 1000 ? 0.001 * step / 1000 : 0.001});
      train.push_back({step, t, "examples_per_sec", 26000 + 300 * std::sin(step / 300.0)});
      train.push_back({step, t, "global_step_per_sec", 200 + 5 * std::cos(step / 300.0)});
    }
    WriteScalars("train", train);
    std::vector<ScalarRecord> eval;
    for (int64_t step : {1000, 2000, 3000}) {
      eval.push_back({step, 0, "accuracy", 0.8 + step / 50000.0});
      eval.push_back({step, 0, "loss", 0.5 - step / 20000.0});
    }
    eval.push_back({3000, 0, "top<5>&acc", 0.99});  // escaped in the page
    WriteScalars("eval", eval);
  }

  PosixEnv env_;
  std::string dir_;
  std::string model_dir_;
};

TEST_F(ReportTest, PlotsEverySeriesAndListsCheckpointsAndTheJobSpec) {
  WriteTrainingRun();
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 2000, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 3000, 2, /*final=*/true).ok());
  ASSERT_TRUE(CreateDirs(env_, CheckpointDir(model_dir_, 2500)).ok());  // never completed

  auto written = WriteReport(env_, model_dir_, "");

  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->path, JoinPath(model_dir_, "report.html"));
  auto html = ReadWholeFile(env_, written->path, 16 << 20);
  ASSERT_TRUE(html.ok());
  const absl::Status xml = testing_util::CheckWellFormedXml(*html);
  EXPECT_TRUE(xml.ok()) << xml;
  // One plot per series: four train tags, three eval tags.
  EXPECT_EQ(Count(*html, "<svg "), 7);
  for (const char* title : {"train loss", "learning rate", "examples/s", "global steps/s",
                            "eval accuracy", "eval loss"}) {
    EXPECT_THAT(*html, HasSubstr(absl::StrCat("<title>", title, "</title>"))) << title;
  }
  EXPECT_THAT(*html, HasSubstr("eval top&lt;5&gt;&amp;acc"));
  EXPECT_THAT(*html, Not(HasSubstr("top<5>")));
  EXPECT_THAT(*html, HasSubstr("run &lt;1&gt; &amp; &#39;x&#39;"));
  EXPECT_THAT(*html, HasSubstr("last 0.304958 at step 3000"));  // 6 digits
  // The two non-finite losses are skipped, and the page says so.
  EXPECT_THAT(*html,
              HasSubstr("2 non-finite values of &#39;loss&#39; skipped (first at step 1500)"));
  EXPECT_THAT(*html, HasSubstr("28 points, steps 100 to 3000"));
  // Checkpoints, the incomplete one with its reason, and the spec.
  EXPECT_THAT(*html, HasSubstr("complete, final"));
  EXPECT_THAT(*html, HasSubstr("ckpt-2500</code></td><td class=\"bad\">"));
  EXPECT_THAT(*html, HasSubstr("name: &quot;test-job&quot;"));
  EXPECT_THAT(*html, HasSubstr("ckpt-3000/MANIFEST"));
  // Self-contained: nothing to fetch, nothing to run.
  EXPECT_THAT(*html, Not(HasSubstr("<script")));
  EXPECT_THAT(*html, Not(HasSubstr("src=")));
  EXPECT_THAT(*html, Not(HasSubstr("href=")));
  EXPECT_THAT(written->notes, testing::Contains(HasSubstr("non-finite")));

  // Kept for a look in a browser: bazel-testlogs/.../test.outputs/.
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    EXPECT_TRUE(WriteTestFile(env_, JoinPath(outputs, "report.html"), *html).ok());
  }
}

TEST_F(ReportTest, MissingFilesAreNamedAndTheRestIsShown) {
  WriteScalars("eval", {{500, 0, "accuracy", 0.7}});
  auto data = CollectReportData(env_, model_dir_);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_TRUE(data->train.empty());
  ASSERT_EQ(data->eval.size(), 1u);
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("train/scalars.jsonl is missing")));
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("holds no checkpoints")));
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("no job spec")));

  const std::string html = RenderHtmlReport(*data);
  EXPECT_TRUE(testing_util::CheckWellFormedXml(html).ok());
  EXPECT_EQ(Count(html, "<svg "), 1);
  EXPECT_THAT(html, HasSubstr("no training scalars"));
  EXPECT_THAT(html, HasSubstr("last 0.7 at step 500"));
  EXPECT_THAT(html, HasSubstr("1 point, at step 500"));
}

TEST_F(ReportTest, ATrainFileWithoutACoordinatorTagSaysWhichIsMissing) {
  WriteScalars("train", {{1, 0, "loss", 2.0}, {2, 0, "loss", 1.0}});
  auto data = CollectReportData(env_, model_dir_);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("no 'learning_rate' values")));
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("no 'examples_per_sec' values")));
}

TEST_F(ReportTest, ASeriesWithNoFiniteValueIsNamedNotPlotted) {
  WriteScalars("train", {{1, 0, "loss", std::numeric_limits<double>::quiet_NaN()}});
  auto data = CollectReportData(env_, model_dir_);
  ASSERT_TRUE(data.ok()) << data.status();
  const std::string html = RenderHtmlReport(*data);
  EXPECT_TRUE(testing_util::CheckWellFormedXml(html).ok());
  EXPECT_EQ(Count(html, "<svg "), 0);
  EXPECT_THAT(html, HasSubstr("train loss: no finite values (1 non-finite skipped)"));
}

TEST_F(ReportTest, NothingToReportIsAnErrorNamingWhatIsMissing) {
  auto empty = CollectReportData(env_, model_dir_);
  EXPECT_TRUE(absl::IsNotFound(empty.status())) << empty.status();
  EXPECT_THAT(empty.status().message(), HasSubstr("train/scalars.jsonl"));
  EXPECT_THAT(empty.status().message(), HasSubstr("eval/scalars.jsonl"));
  EXPECT_THAT(empty.status().message(), HasSubstr("no checkpoints"));

  auto missing = CollectReportData(env_, JoinPath(dir_, "nope"));
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
}

TEST_F(ReportTest, ADamagedLineIsANoteNotAFailure) {
  WriteScalars("eval", {{500, 0, "accuracy", 0.7}});
  ASSERT_TRUE(CreateDirs(env_, JoinPath(model_dir_, "train")).ok());
  ASSERT_TRUE(
      WriteTestFile(env_, JoinPath(model_dir_, "train/scalars.jsonl"), "{\"step\": oops}\n\n")
          .ok());
  auto data = CollectReportData(env_, model_dir_);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->notes, testing::Contains(HasSubstr("cannot read")));
}

TEST_F(ReportTest, CommandExitCodes) {
  FLAGS_to = "";
  EXPECT_EQ(RunReportCommand({}), 2);
  EXPECT_EQ(RunReportCommand({model_dir_}), 2);  // nothing to report
  WriteTrainingRun();
  FLAGS_to = JoinPath(dir_, "r.html");
  EXPECT_EQ(RunReportCommand({model_dir_}), 0);
  EXPECT_TRUE(*PathExists(env_, FLAGS_to));
  FLAGS_to = JoinPath(dir_, "no/such/folder/r.html");
  EXPECT_NE(RunReportCommand({model_dir_}), 0);
  FLAGS_to = "";
}

}  // namespace
}  // namespace pstrain
