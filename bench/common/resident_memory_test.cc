#include "bench/common/resident_memory.h"

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(ResidentBytesTest, ReadsVmRssInBytes) {
  const std::string root = ::testing::TempDir() + "/proc_rss";
  ::mkdir(root.c_str(), 0755);
  ::mkdir((root + "/42").c_str(), 0755);
  std::ofstream(root + "/42/status")
      << "Name:\tpstrain-ps\nVmPeak:\t  999 kB\nVmRSS:\t  123456 kB\n";
  EXPECT_EQ(*ResidentBytes(42, root), 123456 * 1024);
}

TEST(ResidentBytesTest, MissingProcessIsUnavailable) {
  EXPECT_EQ(ResidentBytes(42, ::testing::TempDir() + "/no_such_proc").status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ResidentBytesTest, ThisProcessHoldsWhatItTouched) {
  const int64_t before = *ResidentBytes(0);
  constexpr size_t kBytes = 64 << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  for (size_t i = 0; i < kBytes; i += 4096) block[i] = 1;
  const int64_t after = *ResidentBytes(0);
  EXPECT_GE(after - before, static_cast<int64_t>(kBytes) * 9 / 10);
  EXPECT_EQ(block[kBytes - 4096], 1);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
