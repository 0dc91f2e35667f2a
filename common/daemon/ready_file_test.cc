#include "common/daemon/ready_file.h"

#include <fstream>
#include <thread>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::string TempPath(const std::string& name) { return testing::TempDir() + "/" + name; }

TEST(ReadyFileTest, WrittenInfoReadsBackWhole) {
  const std::string path = TempPath("round_trip.ready");
  ASSERT_TRUE(WriteReadyFile(path, {{"grpc", "127.0.0.1:4242"}, {"pid", "17"}}).ok());
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(path, absl::Seconds(1));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->at("grpc"), "127.0.0.1:4242");
  EXPECT_EQ(info->at("pid"), "17");
  EXPECT_EQ(info->size(), 2u);
}

TEST(ReadyFileTest, WaitSeesAFileWrittenLater) {
  const std::string path = TempPath("later.ready");
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ASSERT_TRUE(WriteReadyFile(path, {{"metrics", "127.0.0.1:9"}}).ok());
  });
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(path, absl::Seconds(10));
  writer.join();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->at("metrics"), "127.0.0.1:9");
}

TEST(ReadyFileTest, MissingFileTimesOutNamingThePath) {
  const std::string path = TempPath("never.ready");
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(path, absl::Milliseconds(30));
  ASSERT_EQ(info.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(info.status().message().find(path), std::string::npos);
}

TEST(ReadyFileTest, ExitedProcessEndsTheWaitAtOnce) {
  const absl::Time start = absl::Now();
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(TempPath("dead.ready"), absl::Seconds(60), [] {
    return absl::AbortedError("ps exited with code 2");
  });
  EXPECT_EQ(info.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(info.status().message(), "ps exited with code 2");
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(ReadyFileTest, MalformedLineIsDataLoss) {
  const std::string path = TempPath("bad.ready");
  std::ofstream(path) << "grpc=127.0.0.1:1\ngarbage\n";
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(path, absl::Seconds(1));
  ASSERT_EQ(info.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(info.status().message().find("'garbage'"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
