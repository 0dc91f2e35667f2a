#include "bench/report/load_average.h"

#include <cstdio>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(LoadAverageTest, ReadsThreeFigures) {
  const std::string load = LoadAverage();
  double one, five, fifteen;
  ASSERT_EQ(std::sscanf(load.c_str(), "%lf %lf %lf", &one, &five, &fifteen), 3) << load;
  EXPECT_GE(one, 0);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
