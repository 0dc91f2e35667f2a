#include "common/net/host_aliases.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(HostAliasesTest, ResolvesListedAddressesAndLeavesOthers) {
  absl::StatusOr<HostAliases> aliases = HostAliases::Parse(
      "pstrain-ps-0.pstrain-ps:7071=127.0.0.1:41001, pstrain-ps-1.pstrain-ps:7071 = "
      "127.0.0.1:41002,0.0.0.0:9090=127.0.0.1:41003");
  ASSERT_TRUE(aliases.ok()) << aliases.status();
  EXPECT_FALSE(aliases->empty());
  EXPECT_EQ(aliases->Resolve("pstrain-ps-0.pstrain-ps:7071"), "127.0.0.1:41001");
  EXPECT_EQ(aliases->Resolve("pstrain-ps-1.pstrain-ps:7071"), "127.0.0.1:41002");
  EXPECT_EQ(aliases->Resolve("0.0.0.0:9090"), "127.0.0.1:41003");
  // Whole addresses: the same host on another port is not an alias.
  EXPECT_EQ(aliases->Resolve("pstrain-ps-0.pstrain-ps:9090"), "pstrain-ps-0.pstrain-ps:9090");
  EXPECT_EQ(aliases->Resolve("pstrain-coordinator:7070"), "pstrain-coordinator:7070");
}

TEST(HostAliasesTest, BlankTextMeansNone) {
  for (const char* text : {"", "  "}) {
    absl::StatusOr<HostAliases> aliases = HostAliases::Parse(text);
    ASSERT_TRUE(aliases.ok()) << aliases.status();
    EXPECT_TRUE(aliases->empty());
    EXPECT_EQ(aliases->Resolve("pstrain-coordinator:7070"), "pstrain-coordinator:7070");
  }
  EXPECT_TRUE(HostAliases().empty());
}

TEST(HostAliasesTest, RepeatingAnEntryIsAllowed) {
  absl::StatusOr<HostAliases> aliases = HostAliases::Parse("a:1=127.0.0.1:2,a:1=127.0.0.1:2");
  ASSERT_TRUE(aliases.ok()) << aliases.status();
  EXPECT_EQ(aliases->Resolve("a:1"), "127.0.0.1:2");
}

TEST(HostAliasesTest, RefusesMalformedEntriesNamingThem) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& bad : {
           Case{"a:1", "PSTRAIN_HOST_ALIASES: entry 1 'a:1' is not FROM=TO"},
           Case{"a:1=127.0.0.1:2,,b:1=127.0.0.1:3", "entry 2 '' is not FROM=TO"},
           Case{"a=127.0.0.1:2", "entry 1 'a=127.0.0.1:2' 'a' is not host:port"},
           Case{"a:1=127.0.0.1", "'127.0.0.1' is not host:port"},
           Case{"a:1=127.0.0.1:70000", "from 0 to 65535"},
           Case{"a:1=127.0.0.1:2,a:1=127.0.0.1:3",
                "entry 2 'a:1=127.0.0.1:3' maps a:1 again: it already maps to 127.0.0.1:2"},
       }) {
    absl::StatusOr<HostAliases> aliases = HostAliases::Parse(bad.text);
    ASSERT_FALSE(aliases.ok()) << bad.text;
    EXPECT_EQ(aliases.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(aliases.status().message(), HasSubstr(bad.message)) << bad.text;
  }
}

}  // namespace
}  // namespace pstrain
