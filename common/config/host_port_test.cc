#include "common/config/host_port.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(ParseHostPortTest, AcceptsNamesIpv4AndBracketedIpv6) {
  absl::StatusOr<HostPort> name = ParseHostPort("tfjob-ps-0.default.svc:2222");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->host, "tfjob-ps-0.default.svc");
  EXPECT_EQ(name->port, 2222);

  absl::StatusOr<HostPort> ipv4 = ParseHostPort("127.0.0.1:65535");
  ASSERT_TRUE(ipv4.ok()) << ipv4.status();
  EXPECT_EQ(ipv4->host, "127.0.0.1");
  EXPECT_EQ(ipv4->port, 65535);

  absl::StatusOr<HostPort> ipv6 = ParseHostPort("[::1]:1");
  ASSERT_TRUE(ipv6.ok()) << ipv6.status();
  EXPECT_EQ(ipv6->host, "::1");
  EXPECT_EQ(ipv6->port, 1);
}

TEST(ParseHostPortTest, RefusesWhatIsNotHostPort) {
  struct Case {
    const char* address;
    const char* message;
  };
  const Case cases[] = {
      {"localhost", "'localhost' is not host:port"},
      {"", "'' is not host:port: it is empty"},
      {":2222", "the host is empty"},
      {"host:", "the port is empty"},
      {"host:http", "port 'http' is not a number"},
      {"host:+80", "port '+80' is not a number"},
      {"host:0", "port 0 is not in 1..65535"},
      {"host:65536", "port 65536 is not in 1..65535"},
      {"host:99999999999", "port 99999999999 is not in 1..65535"},
      {"::1:2222", "an IPv6 host needs brackets"},
      {"[::1]", "'[::1]' is not host:port"},
      {"[::1:2222", "missing ']'"},
      {"[]:2222", "the host is empty"},
      {"ho st:2222", "bad character in the host"},
      {"http://host:2222", "drop the scheme"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<HostPort> parsed = ParseHostPort(c.address);
    ASSERT_FALSE(parsed.ok()) << c.address;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.address;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.message)) << c.address;
  }
}

TEST(ParseListenAddressTest, AcceptsPortZeroToPickAFreePort) {
  absl::StatusOr<HostPort> any = ParseListenAddress("0.0.0.0:0");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->port, 0);
  EXPECT_FALSE(ParseHostPort("0.0.0.0:0").ok());
  EXPECT_FALSE(ParseListenAddress("0.0.0.0").ok());
}

}  // namespace
}  // namespace pstrain
