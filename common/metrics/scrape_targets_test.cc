#include "common/metrics/scrape_targets.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ScrapeTargetsJsonTest, OneGroupPerTargetWithItsLabels) {
  EXPECT_EQ(ScrapeTargetsJson({{"127.0.0.1:9100", {{"role", "coordinator"}, {"index", "0"}}},
                               {"127.0.0.1:9101", {{"role", "ps"}, {"index", "0"}}}}),
            "[\n"
            "  {\"targets\": [\"127.0.0.1:9100\"], \"labels\": {\"index\": \"0\", \"role\": "
            "\"coordinator\"}},\n"
            "  {\"targets\": [\"127.0.0.1:9101\"], \"labels\": {\"index\": \"0\", \"role\": "
            "\"ps\"}}\n"
            "]\n");
}

TEST(ScrapeTargetsJsonTest, NoTargetsIsAnEmptyArray) { EXPECT_EQ(ScrapeTargetsJson({}), "[]\n"); }

TEST(ScrapeTargetsJsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(ScrapeTargetsJson({{"h:1", {{"note", "a\"b\\c\td"}}}}),
            "[\n  {\"targets\": [\"h:1\"], \"labels\": {\"note\": \"a\\\"b\\\\c\\u0009d\"}}\n]\n");
}

TEST(WriteScrapeTargetsTest, ReplacesTheFileWhole) {
  const std::string path = ::testing::TempDir() + "/targets.json";
  ASSERT_TRUE(WriteScrapeTargets(path, {{"h:1", {}}, {"h:2", {}}}).ok());
  ASSERT_TRUE(WriteScrapeTargets(path, {{"h:3", {}}}).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), ScrapeTargetsJson({{"h:3", {}}}));
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "the temporary file is left behind";
}

TEST(WriteScrapeTargetsTest, AFolderThatDoesNotExistIsInternal) {
  absl::Status written = WriteScrapeTargets(::testing::TempDir() + "/no/such/dir/t.json", {});
  EXPECT_EQ(written.code(), absl::StatusCode::kInternal) << written;
}

}  // namespace
}  // namespace pstrain
