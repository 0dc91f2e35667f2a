#include "client/coordinator_address.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(CoordinatorAddressTest, FlagWinsOverEnvironmentWinsOverDefault) {
  EXPECT_EQ(ResolveCoordinatorAddress("10.0.0.1:7000", "10.0.0.2:7000")->host_port,
            "10.0.0.1:7000");
  EXPECT_EQ(ResolveCoordinatorAddress("", "10.0.0.2:7000")->host_port, "10.0.0.2:7000");
  EXPECT_EQ(ResolveCoordinatorAddress("", "10.0.0.2:7000")->source, "PSTRAIN_COORDINATOR");
  absl::StatusOr<CoordinatorAddress> fallback = ResolveCoordinatorAddress("", "");
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->host_port, "localhost:7070");
  EXPECT_TRUE(fallback->is_default());
}

TEST(CoordinatorAddressTest, ABadValueNamesWhereItCameFrom) {
  absl::StatusOr<CoordinatorAddress> bad = ResolveCoordinatorAddress("coordinator", "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--coordinator_address: 'coordinator' is not host:port"),
            std::string::npos)
      << bad.status();
  bad = ResolveCoordinatorAddress("", "localhost:0");
  EXPECT_NE(bad.status().message().find("PSTRAIN_COORDINATOR: 'localhost:0' has port 0"),
            std::string::npos)
      << bad.status();
  // `pstrain local` may ask for a free port.
  EXPECT_TRUE(ResolveCoordinatorAddress("127.0.0.1:0", "", AddressUse::kListen).ok());
}

}  // namespace
}  // namespace pstrain
