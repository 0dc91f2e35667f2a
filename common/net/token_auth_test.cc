#include "common/net/token_auth.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr absl::StatusCode kOk = absl::StatusCode::kOk;
constexpr absl::StatusCode kUnauthenticated = absl::StatusCode::kUnauthenticated;
constexpr absl::StatusCode kDenied = absl::StatusCode::kPermissionDenied;

absl::StatusCode Code(const TokenAuthenticator& auth, TokenScope scope,
                      std::optional<absl::string_view> header) {
  return auth.Authorize(scope, header).code();
}

TEST(TokenAuthenticatorTest, WithoutTokensEverythingIsOpen) {
  TokenAuthenticator auth("", "");
  EXPECT_FALSE(auth.enabled());
  for (TokenScope scope :
       {TokenScope::kClientAdmin, TokenScope::kClientRead, TokenScope::kCluster}) {
    EXPECT_EQ(Code(auth, scope, std::nullopt), kOk);
  }
}

TEST(TokenAuthenticatorTest, AdminCallsTakeTheClientTokenOnly) {
  TokenAuthenticator auth("client-secret", "cluster-secret");
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "Bearer client-secret"), kOk);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "Bearer cluster-secret"), kDenied);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "Bearer wrong"), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, std::nullopt), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "client-secret"), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "Bearer client-secretX"), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kClientAdmin, "Bearer "), kUnauthenticated);
}

TEST(TokenAuthenticatorTest, ReadCallsTakeEitherToken) {
  TokenAuthenticator auth("client-secret", "cluster-secret");
  EXPECT_EQ(Code(auth, TokenScope::kClientRead, "Bearer client-secret"), kOk);
  EXPECT_EQ(Code(auth, TokenScope::kClientRead, "Bearer cluster-secret"), kOk);
  EXPECT_EQ(Code(auth, TokenScope::kClientRead, "Bearer wrong"), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kClientRead, std::nullopt), kUnauthenticated);
}

TEST(TokenAuthenticatorTest, ClusterCallsTakeTheClusterTokenOnly) {
  TokenAuthenticator auth("client-secret", "cluster-secret");
  EXPECT_EQ(Code(auth, TokenScope::kCluster, "Bearer cluster-secret"), kOk);
  EXPECT_EQ(Code(auth, TokenScope::kCluster, "Bearer client-secret"), kDenied);
  EXPECT_EQ(Code(auth, TokenScope::kCluster, "Bearer wrong"), kUnauthenticated);
  EXPECT_EQ(Code(auth, TokenScope::kCluster, std::nullopt), kUnauthenticated);
}

TEST(TokenAuthenticatorTest, OnlyTheScopesWithATokenAreChecked) {
  TokenAuthenticator cluster_only("", "cluster-secret");
  EXPECT_EQ(Code(cluster_only, TokenScope::kClientAdmin, std::nullopt), kOk);
  EXPECT_EQ(Code(cluster_only, TokenScope::kCluster, std::nullopt), kUnauthenticated);
  TokenAuthenticator client_only("client-secret", "");
  EXPECT_EQ(Code(client_only, TokenScope::kCluster, std::nullopt), kOk);
  EXPECT_EQ(Code(client_only, TokenScope::kClientRead, std::nullopt), kUnauthenticated);
}

TEST(TokenAuthenticatorTest, MessagesNeverContainTheToken) {
  TokenAuthenticator auth("client-secret", "cluster-secret");
  for (const char* header : {"Bearer cluster-secret", "Bearer client-secre", "Bearer x"}) {
    std::string message(auth.Authorize(TokenScope::kClientAdmin, header).message());
    EXPECT_EQ(message.find("secre"), std::string::npos) << message;
  }
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

}  // namespace
}  // namespace pstrain
