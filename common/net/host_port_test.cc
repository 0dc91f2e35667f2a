#include "common/net/host_port.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(HostPortTest, ParsesNamesAndIpv4) {
  absl::StatusOr<HostPort> parsed = ParseHostPort("ps-0.pstrain.svc:7070");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->host, "ps-0.pstrain.svc");
  EXPECT_EQ(parsed->port, 7070);
  EXPECT_EQ(parsed->ToString(), "ps-0.pstrain.svc:7070");
  EXPECT_EQ(ParseHostPort("127.0.0.1:0")->port, 0);
}

TEST(HostPortTest, ParsesBracketedIpv6) {
  absl::StatusOr<HostPort> parsed = ParseHostPort("[::1]:8080");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->host, "::1");
  EXPECT_EQ(parsed->port, 8080);
  EXPECT_EQ(parsed->ToString(), "[::1]:8080");
}

TEST(HostPortTest, RefusesMalformedEndpointsNamingThem) {
  for (const char* bad : {"localhost", ":80", "host:", "host:http", "host:65536", "host:-1",
                          "::1:80", "[::1]80", "[::1:80"}) {
    absl::StatusOr<HostPort> parsed = ParseHostPort(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(bad), std::string::npos) << parsed.status();
  }
}

}  // namespace
}  // namespace pstrain
