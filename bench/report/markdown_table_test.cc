#include "bench/report/markdown_table.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(MarkdownTableTest, RendersHeaderRuleAndRowsInOrder) {
  MarkdownTable table({"workers", "examples/s", "ratio"});
  table.AddRow({"1", "9000", "1.00"});
  table.AddRow({"2", "15000", "1.67"});
  EXPECT_EQ(table.Render(),
            "| workers | examples/s | ratio |\n|---|---|---|\n"
            "| 1 | 9000 | 1.00 |\n| 2 | 15000 | 1.67 |");
}

TEST(MarkdownTableTest, WithoutRowsIsTheHeaderAlone) {
  EXPECT_EQ(MarkdownTable({"figure"}).Render(), "| figure |\n|---|");
}

TEST(MarkdownTableTest, KeepsEmptyCells) {
  MarkdownTable table({"figure", "cluster", "reference"});
  table.AddRow({"rows evicted", "0", ""});
  EXPECT_EQ(table.Render(), "| figure | cluster | reference |\n|---|---|---|\n| rows evicted | 0 |  |");
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
