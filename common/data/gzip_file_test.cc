// A gzip stream reads back as the bytes that were compressed, in reads of
// any size and across members; broken streams are refused, naming the file.

#include "common/data/gzip_file.h"

#include <zlib.h>

#include <memory>
#include <string>

#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

std::string Gzip(const std::string& data) {
  z_stream z = {};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class GzipFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& contents) {
    const std::string path = ::testing::TempDir() + "/" + name;
    auto file = env_.NewWritableFile(path);
    EXPECT_TRUE(file.ok() && (*file)->Append(contents).ok() && (*file)->Close().ok());
    return path;
  }

  // Everything the file inflates to, read `chunk` bytes at a time.
  absl::StatusOr<std::string> ReadAll(const std::string& path, size_t chunk) {
    auto file = OpenSequentialFile(env_, path, /*gzip=*/true);
    if (!file.ok()) return file.status();
    std::string all;
    std::string scratch(chunk, '\0');
    for (;;) {
      absl::StatusOr<absl::string_view> piece = (*file)->Read(chunk, scratch.data());
      if (!piece.ok()) return piece.status();
      if (piece->empty()) return all;
      all.append(piece->data(), piece->size());
    }
  }

  PosixEnv env_;
};

std::string Text(int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  return text;
}

TEST_F(GzipFileTest, ReadsWhatWasCompressedInReadsOfAnySize) {
  const std::string text = Text(100000);  // inflates past several input buffers
  const std::string path = Write("text.gz", Gzip(text));
  for (size_t chunk : {size_t{1} << 20, size_t{4096}, size_t{7}}) {
    auto read = ReadAll(path, chunk);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, text) << chunk;
  }
  EXPECT_TRUE(*IsGzipFile(env_, path));
  EXPECT_FALSE(*IsGzipFile(env_, Write("plain.txt", text)));
  EXPECT_FALSE(*IsGzipFile(env_, Write("one_byte", "\x1f")));
}

TEST_F(GzipFileTest, ConcatenatedMembersReadAsOneStream) {
  const std::string path = Write("members.gz", Gzip("first,") + Gzip("") + Gzip("second"));
  auto read = ReadAll(path, 3);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "first,second");
}

TEST_F(GzipFileTest, SkipDropsInflatedBytes) {
  const std::string text = Text(20000);
  auto file = OpenSequentialFile(env_, Write("skip.gz", Gzip(text)), /*gzip=*/true);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Skip(100001).ok());
  char scratch[10];
  auto piece = (*file)->Read(sizeof(scratch), scratch);
  ASSERT_TRUE(piece.ok());
  EXPECT_EQ(*piece, text.substr(100001, piece->size()));
}

TEST_F(GzipFileTest, RefusesBrokenStreams) {
  const std::string compressed = Gzip(Text(1000));
  const std::string truncated = Write("truncated.gz", compressed.substr(0, compressed.size() / 2));
  auto read = ReadAll(truncated, 4096);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("truncated.gz: gzip data breaks after"));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("ends inside a gzip member"));

  std::string damaged = compressed;
  damaged[damaged.size() / 2] ^= 0x55;
  damaged[damaged.size() / 2 + 1] ^= 0x55;
  read = ReadAll(Write("damaged.gz", damaged), 4096);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("damaged.gz"));

  read = ReadAll(Write("not_gzip.gz", "plain text, not gzip"), 4096);
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("not_gzip.gz: gzip data breaks after 0 inflated bytes: incorrect header"));
}

}  // namespace
}  // namespace pstrain
