#include "common/metrics/process_stats.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// A folder laid out like /proc for one process. The stat line is the real
// format of Linux 6 with a command name that holds ") (" to trip a naive
// parser.
class FakeProc {
 public:
  FakeProc() : root_(::testing::TempDir() + "/fake_proc_" + std::to_string(counter_++)) {
    ::mkdir(root_.c_str(), 0755);
    ::mkdir((root_ + "/self").c_str(), 0755);
    ::mkdir((root_ + "/self/fd").c_str(), 0755);
    Write("/stat", "cpu  1 2 3 4\nbtime 1700000000\nprocesses 42\n");
    Write("/self/stat",
          "1234 (pstrain ) (ps) S 1 1234 1234 0 -1 4194560 500 0 0 0 "
          // utime stime (ticks) ...
          "250 150 0 0 20 0 7 0 "
          // starttime (ticks after boot) vsize rss (pages)
          "1000 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    Write("/self/limits",
          "Limit                     Soft Limit           Hard Limit           Units\n"
          "Max cpu time              unlimited            unlimited            seconds\n"
          "Max open files            1024                 524288               files\n");
    for (const char* fd : {"0", "1", "2", "7"}) Write(std::string("/self/fd/") + fd, "");
  }

  void Write(const std::string& path, const std::string& text) {
    std::ofstream(root_ + path) << text;
  }
  const std::string& root() const { return root_; }

 private:
  static int counter_;
  const std::string root_;
};

int FakeProc::counter_ = 0;

TEST(ReadProcessStatsTest, ReadsEveryFieldFromAProcTree) {
  FakeProc proc;
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.root());
  ASSERT_TRUE(stats.ok()) << stats.status();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 400 / ticks);
  EXPECT_DOUBLE_EQ(stats->start_time_seconds, 1700000000 + 1000 / ticks);
  EXPECT_EQ(stats->virtual_bytes, 104857600);
  EXPECT_EQ(stats->resident_bytes, 2560 * ::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(stats->open_fds, 4);
  EXPECT_DOUBLE_EQ(stats->max_fds, 1024);
}

TEST(ReadProcessStatsTest, AnUnlimitedFileLimitIsInfinite) {
  FakeProc proc;
  proc.Write("/self/limits", "Max open files            unlimited            unlimited    files\n");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.root());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(std::isinf(stats->max_fds));
}

TEST(ReadProcessStatsTest, AMangledStatLineIsAnInternalErrorNamingTheFile) {
  FakeProc proc;
  proc.Write("/self/stat", "1234 (ps) S 1 2 3\n");
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc.root());
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(stats.status().message().find("self/stat"), std::string::npos) << stats.status();
}

TEST(ReadProcessStatsTest, AMissingProcIsUnavailable) {
  absl::StatusOr<ProcessStats> stats = ReadProcessStats(::testing::TempDir() + "/no_such_proc");
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kUnavailable) << stats.status();
}

TEST(ReadProcessStatsTest, TheRealProcDescribesThisProcess) {
  absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  // Started within the last hour, not in the future (boot time and ticks
  // put together right).
  EXPECT_LE(stats->start_time_seconds, now + 1);
  EXPECT_GT(stats->start_time_seconds, now - 3600);
  EXPECT_GT(stats->resident_bytes, 1 << 20);
  EXPECT_GE(stats->virtual_bytes, stats->resident_bytes);
  EXPECT_GE(stats->open_fds, 3);  // stdin, stdout, stderr at least
  EXPECT_GE(stats->max_fds, stats->open_fds);
  EXPECT_GE(stats->cpu_seconds, 0);
}

}  // namespace
}  // namespace pstrain
