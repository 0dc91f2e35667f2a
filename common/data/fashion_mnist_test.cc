#include "common/data/fashion_mnist.h"

#include <string>

#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::WriteTestFile;

std::string BigEndian(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string ImageFile(uint32_t magic, uint32_t count, uint32_t rows, uint32_t cols,
                      size_t data_bytes) {
  std::string bytes = BigEndian(magic) + BigEndian(count) + BigEndian(rows) + BigEndian(cols);
  for (size_t i = 0; i < data_bytes; ++i) bytes += static_cast<char>(i % 256);
  return bytes;
}

std::string LabelFile(const std::string& labels) {
  return BigEndian(0x801) + BigEndian(labels.size()) + labels;
}

TEST(FashionMnistTest, ParsesImages) {
  auto images = ParseIdxImages(ByteBuffer::CopyOf(ImageFile(0x803, 2, 2, 3, 12)), "img");
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_EQ(images->count, 2);
  EXPECT_EQ(images->rows, 2);
  EXPECT_EQ(images->cols, 3);
  EXPECT_EQ(images->pixels.size(), 12u);
  EXPECT_EQ(images->pixels.data()[11], 11);
}

TEST(FashionMnistTest, RefusesBadMagic) {
  auto images = ParseIdxImages(ByteBuffer::CopyOf(ImageFile(0x801, 2, 2, 3, 12)), "img.gz");
  EXPECT_EQ(images.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(images.status().message().find("img.gz: offset 0: bad magic"), std::string::npos)
      << images.status();
}

TEST(FashionMnistTest, RefusesTruncatedAndTrailingData) {
  auto truncated = ParseIdxImages(ByteBuffer::CopyOf(ImageFile(0x803, 2, 2, 3, 11)), "img");
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos)
      << truncated.status();
  EXPECT_NE(truncated.status().message().find("offset 27"), std::string::npos);
  auto trailing = ParseIdxImages(ByteBuffer::CopyOf(ImageFile(0x803, 2, 2, 3, 13)), "img");
  EXPECT_NE(trailing.status().message().find("trailing"), std::string::npos) << trailing.status();
  auto short_header = ParseIdxLabels(BigEndian(0x801), "lbl");
  EXPECT_NE(short_header.status().message().find("truncated header"), std::string::npos);
}

TEST(FashionMnistTest, LoadsAFolderAndChecksLabels) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  WriteTestFile("t10k-images-idx3-ubyte.gz", ImageFile(0x803, 3, 2, 2, 12), /*gzip=*/true);
  WriteTestFile("t10k-labels-idx1-ubyte.gz", LabelFile(std::string("\x00\x09\x03", 3)), true);
  auto source = LoadFashionMnist(dir, /*test=*/true);
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  EXPECT_EQ(info.num_examples, 3);
  EXPECT_EQ(info.dense_dim, 4);
  EXPECT_EQ(info.image_height, 2);
  EXPECT_EQ(info.image_channels, 1);
  EXPECT_EQ(info.num_classes, 10);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({1}, &batch).ok());
  EXPECT_EQ(batch.labels[0], 9);
  // Example 1 holds bytes 4..7; pixels scale to [0, 1].
  EXPECT_FLOAT_EQ(batch.dense.data<float>()[3], 7.0f / 255);

  WriteTestFile("t10k-labels-idx1-ubyte.gz", LabelFile(std::string("\x00\x0a\x03", 3)), true);
  auto bad_label = LoadFashionMnist(dir, true);
  EXPECT_NE(bad_label.status().message().find("label 10"), std::string::npos) << bad_label.status();
  WriteTestFile("t10k-labels-idx1-ubyte.gz", LabelFile(std::string("\x00\x01", 2)), true);
  auto mismatch = LoadFashionMnist(dir, true);
  EXPECT_NE(mismatch.status().message().find("2 labels for 3 images"), std::string::npos)
      << mismatch.status();
  EXPECT_EQ(LoadFashionMnist(dir, /*test=*/false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
