#include "bench/common/process_cpu.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(CpuSecondsTest, AddsUserAndSystemTicksAfterACommandNameWithSpaces) {
  const std::string root = ::testing::TempDir() + "/proc_cpu";
  ::mkdir(root.c_str(), 0755);
  ::mkdir((root + "/42").c_str(), 0755);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  std::ofstream(root + "/42/stat") << "42 (pstrain ps) S 1 42 42 0 -1 4194304 100 0 0 0 "
                                   << 3 * ticks << " " << 2 * ticks << " 0 0 20 0 9 0 1 2 3\n";
  EXPECT_DOUBLE_EQ(*CpuSeconds(42, root), 5.0);
}

TEST(CpuSecondsTest, MissingProcessIsUnavailable) {
  EXPECT_EQ(CpuSeconds(42, ::testing::TempDir() + "/no_such_proc").status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(CpuSecondsTest, GrowsWhileThisProcessComputes) {
  const double before = *CpuSeconds(::getpid());
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < end) sink = sink + 1;
  EXPECT_GT(*CpuSeconds(::getpid()), before);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
