#include "common/model/dnnl/primitive_cache.h"

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(PrimitiveCacheTest, BuildsOncePerKey) {
  PrimitiveCache<std::string> cache(4);
  int builds = 0;
  auto build = [&]() -> absl::StatusOr<std::string> {
    ++builds;
    return std::string("p");
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.GetOrBuild({128, 784}, build).ok());
  ASSERT_TRUE(cache.GetOrBuild({32, 784}, build).ok());
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(cache.hits(), 2);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(PrimitiveCacheTest, EvictsLeastRecentlyUsed) {
  PrimitiveCache<int> cache(2);
  int builds = 0;
  auto build = [&]() -> absl::StatusOr<int> { return ++builds; };
  ASSERT_EQ(**cache.GetOrBuild({1}, build), 1);
  ASSERT_EQ(**cache.GetOrBuild({2}, build), 2);
  ASSERT_EQ(**cache.GetOrBuild({1}, build), 1);  // {1} is now the most recent
  ASSERT_EQ(**cache.GetOrBuild({3}, build), 3);  // evicts {2}
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(**cache.GetOrBuild({1}, build), 1);
  EXPECT_EQ(**cache.GetOrBuild({2}, build), 4);  // rebuilt
}

TEST(PrimitiveCacheTest, DoesNotCacheFailures) {
  PrimitiveCache<int> cache;
  auto fail = []() -> absl::StatusOr<int> { return absl::UnimplementedError("no"); };
  EXPECT_EQ(cache.GetOrBuild({1}, fail).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(**cache.GetOrBuild({1}, []() -> absl::StatusOr<int> { return 7; }), 7);
}

}  // namespace
}  // namespace pstrain
