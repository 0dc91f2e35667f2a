#include "client/report/testing/xml_check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {
namespace {

using ::testing::HasSubstr;

TEST(XmlCheckTest, AcceptsWellFormedPages) {
  EXPECT_TRUE(CheckWellFormedXml("<a/>").ok());
  EXPECT_TRUE(CheckWellFormedXml(
                  "<!DOCTYPE html>\n<html lang=\"en\"><!-- c --><p class='x'>a &amp; b &lt; c "
                  "&#39; &#x41;</p><br/></html>\n")
                  .ok());
}

TEST(XmlCheckTest, RefusesWhatAnXmlParserRefuses) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"<a><b></a></b>", "</a> closes <b>"},
      {"<a>", "<a> is never closed"},
      {"<a></a><b/>", "second root"},
      {"<a>x < y</a>", "'<' not followed by a tag name"},
      {"<a>AT&T</a>", "'&' without ';'"},
      {"<a>&nbsp;</a>", "unknown entity"},
      {"<a x=1/>", "unquoted"},
      {"<a x=\"1\" x=\"2\"/>", "twice"},
      {"<a x=\"<\"/>", "'<' in character data"},
      {"<a checked/>", "without a value"},
      {"text<a/>", "outside the root"},
      {"<a>\n</b>", "line 2"},
  };
  for (const Case& c : cases) {
    const absl::Status status = CheckWellFormedXml(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.text;
    EXPECT_THAT(status.message(), HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace testing_util
}  // namespace pstrain
