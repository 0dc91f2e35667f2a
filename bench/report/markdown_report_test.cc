#include "bench/report/markdown_report.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(MarkdownReportTest, RendersTitleBlocksTableAndVerdicts) {
  MarkdownReport report("Wire");
  report.Paragraph("Push and pull.");
  report.Command("bazel-bin/bench/ps/push_pull_bench --steps=3");
  report.Table({"shards", "GB/s"}, {{"1", "1.20"}, {"2", "1.40"}});
  report.Target("64 MB over 2 shards >= 50% of TCP", false, "0.45");
  report.Target("1 MB", true, "0.61");
  const std::string md = report.Render();
  EXPECT_EQ(md.rfind("## Wire\n\nPush and pull.\n\n"
                     "    bazel-bin/bench/ps/push_pull_bench --steps=3\n\n"
                     "| shards | GB/s |\n|---|---|\n| 1 | 1.20 |\n| 2 | 1.40 |\n\n"
                     "Target: 64 MB over 2 shards >= 50% of TCP: **not met** (0.45).\n\n"
                     "Target: 1 MB: **met** (0.61).\n\n"
                     "Load average (1, 5, 15 min): ",
                     0),
            0u)
      << md;
}

TEST(MarkdownReportTest, RendersSubHeadingsAndBuiltTablesInOrder) {
  MarkdownReport report("End to end");
  report.Paragraph("What is measured.");
  report.SubHeading("Throughput");
  MarkdownTable table({"run", "examples/s"});
  table.AddRow({"async", "12000"});
  report.Table(table);
  report.Target("async >= 1.2x", true, "1.30x");
  report.SubHeading("Scaling");
  report.Paragraph("One cluster per point.");
  const std::string md = report.Render();
  EXPECT_EQ(md.rfind("## End to end\n\nWhat is measured.\n\n### Throughput\n\n"
                     "| run | examples/s |\n|---|---|\n| async | 12000 |\n\n"
                     "Target: async >= 1.2x: **met** (1.30x).\n\n"
                     "### Scaling\n\nOne cluster per point.\n\n"
                     "Load average (1, 5, 15 min): ",
                     0),
            0u)
      << md;
}

TEST(MarkdownReportTest, EndsWithTheLoadAverageAtStartAndEnd) {
  const std::string md = MarkdownReport("Empty").Render();
  EXPECT_EQ(md.rfind("## Empty\n\nLoad average (1, 5, 15 min): ", 0), 0u) << md;
  EXPECT_NE(md.find(" at the start, "), std::string::npos) << md;
  const std::string end = " at the end.\n";
  ASSERT_GE(md.size(), end.size());
  EXPECT_EQ(md.substr(md.size() - end.size()), end) << md;
}

TEST(MarkdownReportTest, WritesTheFileAndNamesAnUnwritablePath) {
  MarkdownReport report("Apply");
  const std::string path = testing::TempDir() + "/apply.md";
  ASSERT_TRUE(report.WriteTo(path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), report.Render());

  const absl::Status bad = report.WriteTo("/nonexistent-folder/apply.md");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("/nonexistent-folder/apply.md"), std::string::npos);
  EXPECT_TRUE(report.WriteTo("").ok());
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
