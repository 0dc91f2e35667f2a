// A tensor's external data is read from the model's folder and nowhere
// else; every way its entries can be wrong is refused, naming the file.

#include "common/onnx/onnx_external_data.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr char kWhat[] = "model.onnx: initializer w";
constexpr int64_t kBytes = 16;  // a float [2, 2]

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

onnx::TensorProto External(std::vector<std::pair<std::string, std::string>> entries) {
  onnx::TensorProto tensor;
  tensor.set_name("w");
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto& [key, value] : entries) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(std::move(key));
    entry->set_value(std::move(value));
  }
  return tensor;
}

class OnnxExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = JoinPath(::testing::TempDir(), "external_data");
    std::filesystem::remove_all(root_);
    folder_ = JoinPath(root_, "model");
    std::filesystem::create_directories(JoinPath(folder_, "sub"));
    WriteFile(JoinPath(folder_, "weights.bin"), "headerXX" + kWeights);
    WriteFile(JoinPath(folder_, "sub/weights.bin"), kWeights);
    WriteFile(JoinPath(root_, "outside.bin"), kWeights);
  }

  absl::StatusOr<std::string> Read(const onnx::TensorProto& tensor) {
    return ReadOnnxExternalData(env_, folder_, tensor, kBytes, kWhat);
  }

  std::string Refusal(const onnx::TensorProto& tensor) {
    absl::StatusOr<std::string> read = Read(tensor);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(kWhat));
    return std::string(read.status().message());
  }

  const std::string kWeights = "0123456789abcdef";
  PosixEnv env_;
  std::string root_;
  std::string folder_;
};

TEST_F(OnnxExternalDataTest, ReadsTheTensorsBytesInTheModelsFolder) {
  auto read = Read(External({{"location", "weights.bin"}, {"offset", "8"}, {"length", "16"}}));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, kWeights);

  // Without a length the data runs to the end of the file; a folder below
  // the model's, or "." on the way, is inside it.
  read = Read(External({{"location", "weights.bin"}, {"offset", "8"}}));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, kWeights);
  read = Read(External({{"location", "./sub/weights.bin"}, {"checksum", "unverified"}}));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, kWeights);
}

TEST_F(OnnxExternalDataTest, RefusesFilesOutsideTheModelsFolder) {
  EXPECT_THAT(Refusal(External({{"location", JoinPath(root_, "outside.bin")}})),
              HasSubstr("is an absolute path; it must be relative to the model's folder"));
  EXPECT_THAT(Refusal(External({{"location", "../outside.bin"}})),
              HasSubstr("../outside.bin leaves the model's folder"));
  EXPECT_THAT(Refusal(External({{"location", "sub/../../outside.bin"}})),
              HasSubstr("leaves the model's folder"));
}

// A link the folder's owner placed is followed, wherever it leads: the
// confinement is against what the graph names, not what the folder holds.
TEST_F(OnnxExternalDataTest, FollowsTheFoldersSymbolicLinks) {
  std::filesystem::create_symlink(JoinPath(root_, "outside.bin"), JoinPath(folder_, "link.bin"));
  auto read = Read(External({{"location", "link.bin"}}));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, kWeights);

  std::filesystem::create_symlink(JoinPath(root_, "gone.bin"), JoinPath(folder_, "dangling.bin"));
  read = Read(External({{"location", "dangling.bin"}}));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("dangling.bin"));
}

TEST_F(OnnxExternalDataTest, RefusesEntriesThatDoNotDescribeTheTensor) {
  EXPECT_THAT(Refusal(External({})), HasSubstr("names none (no location)"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"offset", "-8"}})),
              HasSubstr("offset '-8' is not a non-negative integer"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"length", "sixteen"}})),
              HasSubstr("length 'sixteen' is not a non-negative integer"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"basepath", "/"}})),
              HasSubstr("an entry 'basepath', which ONNX does not define"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"offset", "8"}, {"length", "12"}})),
              HasSubstr("is 12 bytes long; its dims and type take 16"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"offset", "12"}, {"length", "16"}})),
              HasSubstr("has 24 bytes, too few for 16 from offset 12"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"offset", "99"}})),
              HasSubstr("too few for 16 from offset 99"));
  EXPECT_THAT(Refusal(External({{"location", "weights.bin"}, {"offset", "4"}})),
              HasSubstr("runs from offset 4 to the end of " + JoinPath(folder_, "weights.bin") +
                        ", 20 bytes; its dims and type take 16"));
  EXPECT_THAT(Refusal(External({{"location", "sub"}})), HasSubstr("sub is a folder"));

  absl::StatusOr<std::string> missing = Read(External({{"location", "missing.bin"}}));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("missing.bin"));
}

TEST_F(OnnxExternalDataTest, WhatIsSetParsesBack) {
  onnx::TensorProto tensor;
  tensor.set_raw_data("inline bytes");
  SetOnnxExternalLocation({"sub/weights.bin", 0, kBytes}, &tensor);
  EXPECT_TRUE(tensor.raw_data().empty());
  auto where = ParseOnnxExternalLocation(tensor, kWhat);
  ASSERT_TRUE(where.ok()) << where.status();
  EXPECT_EQ(where->location, "sub/weights.bin");
  EXPECT_EQ(where->offset, 0);
  EXPECT_EQ(where->length, kBytes);
  auto read = Read(tensor);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, kWeights);
}

}  // namespace
}  // namespace pstrain
