// Reads from the middle of gzipped files through access points give the
// bytes a plain read gives: in one member or across concatenated members,
// at and between points; a damaged window is DataLoss, not wrong bytes.

#include "common/data/gzip_access.h"

#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

// Text that compresses as logs do: numbers and words, not one repeated line.
std::string Logs(size_t bytes, uint32_t seed) {
  std::mt19937 random(seed);
  std::string text;
  const char* const words[] = {"click", "view", "ad", "user", "page", "0", "1"};
  while (text.size() < bytes) {
    absl::StrAppend(&text, words[random() % 7], "\t", random() % 100000, "\t", absl::Hex(random()),
                    "\n");
  }
  return text;
}

// `text` as one gzip member.
std::string Gzip(const std::string& text) {
  z_stream z = {};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class GzipAccessTest : public ::testing::Test {
 protected:
  // Inflates `path` once through GzipIndexingFile, a block of records
  // starting every `block` stream bytes (and the points at least half a
  // block apart).
  void Index(const std::string& path, int64_t block) {
    struct Windows : WritableFile {
      std::string* into;
      absl::Status Append(absl::string_view data) override {
        into->append(data.data(), data.size());
        return absl::OkStatus();
      }
      absl::Status Flush() override { return absl::OkStatus(); }
      absl::Status Sync() override { return absl::OkStatus(); }
      absl::Status Close() override { return absl::OkStatus(); }
    } windows;
    windows.into = &windows_;
    auto file = GzipIndexingFile::Open(env_, path, block / 2, &windows);
    ASSERT_TRUE(file.ok()) << file.status();
    std::vector<char> buffer(100000);
    while (true) {
      absl::StatusOr<absl::string_view> read = (*file)->Read(buffer.size(), buffer.data());
      ASSERT_TRUE(read.ok()) << read.status();
      if (read->empty()) break;
      for (int64_t start = (static_cast<int64_t>(inflated_.size()) + block - 1) / block * block;
           start < static_cast<int64_t>(inflated_.size() + read->size()); start += block) {
        ASSERT_TRUE((*file)->MarkBlockStart(start).ok());
      }
      inflated_.append(read->data(), read->size());
    }
    points_ = (*file)->points();
  }

  // Stream bytes [offset, offset + size) read from the point before them.
  absl::StatusOr<std::string> ReadAt(const std::string& path, int64_t offset, size_t size) {
    const GzipAccessPoint* point = AccessPointBefore(points_, offset);
    if (point == nullptr) return absl::NotFoundError("no point");
    std::string into(size, '\0');
    const absl::string_view stored =
        absl::string_view(windows_).substr(point->window_offset(), point->window_stored_bytes());
    absl::Status read = ReadGzipAt(env_, path, *point, stored, offset, &into);
    if (!read.ok()) return read;
    return into;
  }

  PosixEnv env_;
  std::string windows_;
  std::string inflated_;
  std::vector<GzipAccessPoint> points_;
};

TEST_F(GzipAccessTest, ReadsFromTheMiddleOfOneMemberGiveThePlainBytes) {
  const std::string text = Logs(3 << 20, 1);
  const std::string path = testing_util::WriteTestFile("one_member.gz", Gzip(text));
  Index(path, 256 << 10);
  ASSERT_EQ(inflated_, text);
  // A point at the start and one at the deflate boundary before each block
  // (deflate blocks are tens of KiB): never after it, never far before.
  const size_t blocks = (text.size() + (256 << 10) - 1) / (256 << 10);
  ASSERT_EQ(points_.size(), blocks);
  EXPECT_EQ(points_[0].stream_offset(), 0);
  for (size_t b = 1; b < points_.size(); ++b) {
    const int64_t block_start = static_cast<int64_t>(b) * (256 << 10);
    EXPECT_LE(points_[b].stream_offset(), block_start);
    EXPECT_GT(points_[b].stream_offset(), block_start - (128 << 10)) << b;
  }
  std::mt19937 random(3);
  for (int i = 0; i < 40; ++i) {
    const int64_t offset = random() % (text.size() - 1);
    const size_t size = std::min<size_t>(1 + random() % 300000, text.size() - offset);
    absl::StatusOr<std::string> read = ReadAt(path, offset, size);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(*read, text.substr(offset, size)) << "at " << offset;
  }
  // Exactly at each point.
  for (const GzipAccessPoint& point : points_) {
    absl::StatusOr<std::string> read = ReadAt(path, point.stream_offset(), 100);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, text.substr(point.stream_offset(), 100));
  }
}

TEST_F(GzipAccessTest, ReadsAcrossConcatenatedMembersGiveThePlainBytes) {
  const std::string first = Logs(700 << 10, 2), second = Logs(900 << 10, 3);
  const std::string path =
      testing_util::WriteTestFile("two_members.gz", Gzip(first) + Gzip(second));
  Index(path, 128 << 10);
  const std::string text = first + second;
  ASSERT_EQ(inflated_, text);
  // Across the members' seam, from a point in the first.
  const int64_t seam = static_cast<int64_t>(first.size());
  for (int64_t offset : {seam - 5000, seam - 1, seam, seam + 7}) {
    absl::StatusOr<std::string> read = ReadAt(path, offset, 20000);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, text.substr(offset, 20000)) << "at " << offset;
  }
  // Past the stream's end.
  absl::StatusOr<std::string> past = ReadAt(path, text.size() - 10, 20);
  EXPECT_TRUE(absl::IsDataLoss(past.status())) << past.status();
}

TEST_F(GzipAccessTest, ADamagedWindowIsDataLoss) {
  const std::string text = Logs(1 << 20, 4);
  const std::string path = testing_util::WriteTestFile("damaged.gz", Gzip(text));
  Index(path, 256 << 10);
  ASSERT_GE(points_.size(), 2u);
  windows_[points_[1].window_offset() + 3] ^= 0x20;
  absl::StatusOr<std::string> read = ReadAt(path, points_[1].stream_offset() + 10, 10);
  EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
  EXPECT_THAT(read.status().message(), HasSubstr("damaged.gz: its access window is damaged"));
}

}  // namespace
}  // namespace pstrain
