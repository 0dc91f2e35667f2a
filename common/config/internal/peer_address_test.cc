#include "common/config/internal/peer_address.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace config_internal {
namespace {

using ::testing::HasSubstr;

TEST(ParsePeerAddressTest, AcceptsNamesIpv4AndBracketedIpv6) {
  absl::StatusOr<HostPort> name = ParsePeerAddress("tfjob-ps-0.default.svc:2222");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->host, "tfjob-ps-0.default.svc");
  EXPECT_EQ(name->port, 2222);

  absl::StatusOr<HostPort> ipv4 = ParsePeerAddress("127.0.0.1:65535");
  ASSERT_TRUE(ipv4.ok()) << ipv4.status();
  EXPECT_EQ(ipv4->port, 65535);

  absl::StatusOr<HostPort> ipv6 = ParsePeerAddress("[::1]:1");
  ASSERT_TRUE(ipv6.ok()) << ipv6.status();
  EXPECT_EQ(ipv6->host, "::1");
  EXPECT_EQ(ipv6->port, 1);
}

TEST(ParsePeerAddressTest, RefusesWhatIsNotAPeerAddress) {
  struct Case {
    const char* address;
    const char* message;
  };
  const Case cases[] = {
      {"localhost", "'localhost' is not host:port"},
      {"", "'' is not host:port"},
      {":2222", "is not host:port"},
      {"host:", "is not host:port"},
      {"host:http", "is not host:port"},
      {"host:+80", "the port '+80' is not a number"},
      {"host: 80", "the port ' 80' is not a number"},
      {"host:0", "port 0 means \"pick a free port\""},
      {"host:65536", "is not host:port"},
      {"::1:2222", "is not host:port"},
      {"[::1]", "is not host:port"},
      {"ho st:2222", "bad character ' ' in the host"},
      {"http://host:2222", "drop the URL scheme"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<HostPort> parsed = ParsePeerAddress(c.address);
    ASSERT_FALSE(parsed.ok()) << c.address;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.address;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.message)) << c.address;
  }
}

}  // namespace
}  // namespace config_internal
}  // namespace pstrain
