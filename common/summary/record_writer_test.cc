#include "common/summary/record_writer.h"

#include <cstdint>
#include <memory>
#include <string>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::string LittleEndian(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
  return out;
}

// TFRecord's masking, written out from its definition rather than taken
// from the code under test.
uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string ExpectedRecord(const std::string& data) {
  const std::string length = LittleEndian(data.size(), 8);
  return length + LittleEndian(Mask(Crc32c(length)), 4) + data +
         LittleEndian(Mask(Crc32c(data)), 4);
}

TEST(RecordWriterTest, FramingMatchesTheFormatByteForByte) {
  for (const std::string& data :
       {std::string("hello"), std::string(), std::string(1000, '\xff'), std::string("a\0b", 3)}) {
    EXPECT_EQ(FrameRecord(data), ExpectedRecord(data)) << data.size() << " bytes";
  }
}

TEST(RecordWriterTest, KnownRecords) {
  // Computed independently (a bitwise CRC32C) for "hello" and for an empty
  // record, whose data CRC masks to the mask delta itself.
  EXPECT_EQ(FrameRecord("hello"), std::string("\x05\x00\x00\x00\x00\x00\x00\x00\xea\xb2\x04\x3e"
                                              "hello"
                                              "\xbb\x1f\x1c\x19",
                                              21));
  EXPECT_EQ(FrameRecord(""), std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x29\x03\x98\x07"
                                         "\xd8\xea\x82\xa2",
                                         16));
}

TEST(RecordWriterTest, WritesRecordsBackToBack) {
  PosixEnv env;
  const std::string path = NewTestDir(env) + "/records";
  absl::StatusOr<std::unique_ptr<WritableFile>> file = env.NewWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  RecordWriter writer(file->get());
  ASSERT_TRUE(writer.WriteRecord("first").ok());
  EXPECT_EQ(writer.offset(), static_cast<int64_t>(kRecordHeaderBytes + 5 + kRecordFooterBytes));
  ASSERT_TRUE(writer.WriteRecord("second").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*ReadWholeFile(env, path, 1000), ExpectedRecord("first") + ExpectedRecord("second"));
}

}  // namespace
}  // namespace pstrain
