#include "common/summary/record_reader.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/summary/record_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RecordReaderTest : public ::testing::Test {
 protected:
  RecordReaderTest() : path_(NewTestDir(env_) + "/records") {}

  void WriteFile(const std::string& contents) {
    ASSERT_TRUE(WriteTestFile(env_, path_, contents).ok());
  }

  // Reads records until an error; returns them and sets *end to the error.
  std::vector<std::string> ReadAll(absl::Status* end, RecordReaderOptions options = {}) {
    std::vector<std::string> records;
    absl::StatusOr<std::unique_ptr<SequentialFile>> file = env_.NewSequentialFile(path_);
    EXPECT_TRUE(file.ok()) << file.status();
    RecordReader reader(file->get(), path_, options);
    std::string record;
    while ((*end = reader.ReadRecord(&record)).ok()) records.push_back(record);
    return records;
  }

  PosixEnv env_;
  const std::string path_;
};

TEST_F(RecordReaderTest, ReadsWhatWasWritten) {
  const std::string big(200000, 'z');  // larger than the reader's chunk
  WriteFile(FrameRecord("one") + FrameRecord("") + FrameRecord(big) + FrameRecord("four"));
  absl::Status end;
  EXPECT_THAT(ReadAll(&end), ElementsAre("one", "", big, "four"));
  EXPECT_TRUE(absl::IsOutOfRange(end)) << end;
}

TEST_F(RecordReaderTest, EmptyFileHasNoRecords) {
  WriteFile("");
  absl::Status end;
  EXPECT_TRUE(ReadAll(&end).empty());
  EXPECT_TRUE(absl::IsOutOfRange(end)) << end;
}

TEST_F(RecordReaderTest, DamagedDataIsDataLossNamingTheOffset) {
  std::string contents = FrameRecord("first") + FrameRecord("second");
  const size_t second = FrameRecord("first").size();
  contents[second + kRecordHeaderBytes + 2] ^= 0x10;  // inside "second"
  WriteFile(contents);
  absl::Status end;
  EXPECT_THAT(ReadAll(&end), ElementsAre("first"));
  ASSERT_TRUE(absl::IsDataLoss(end)) << end;
  EXPECT_THAT(end.message(), AllOf(HasSubstr(path_), HasSubstr("offset 21"),
                                   HasSubstr("crc32c of its 6 data bytes")));
}

TEST_F(RecordReaderTest, DamagedLengthIsDataLossNamingTheOffset) {
  std::string contents = FrameRecord("first") + FrameRecord("second");
  contents[21] ^= 0x01;  // the second record's length
  WriteFile(contents);
  absl::Status end;
  EXPECT_THAT(ReadAll(&end), ElementsAre("first"));
  ASSERT_TRUE(absl::IsDataLoss(end)) << end;
  EXPECT_THAT(end.message(), AllOf(HasSubstr("offset 21"), HasSubstr("crc32c of its length")));
}

TEST_F(RecordReaderTest, DamagedChecksumIsDataLoss) {
  std::string contents = FrameRecord("first");
  contents.back() ^= 0x80;
  WriteFile(contents);
  absl::Status end;
  EXPECT_TRUE(ReadAll(&end).empty());
  EXPECT_TRUE(absl::IsDataLoss(end)) << end;
}

TEST_F(RecordReaderTest, TruncatedRecordIsDataLossUnlessATailIsAllowed) {
  const std::string whole = FrameRecord("first") + FrameRecord("second");
  for (const size_t cut : {size_t{3}, kRecordHeaderBytes, kRecordHeaderBytes + 4}) {
    WriteFile(whole.substr(0, whole.size() - cut));
    absl::Status end;
    EXPECT_THAT(ReadAll(&end), ElementsAre("first"));
    ASSERT_TRUE(absl::IsDataLoss(end)) << end;
    EXPECT_THAT(end.message(), AllOf(HasSubstr("offset 21"), HasSubstr("truncated")));

    RecordReaderOptions tolerant;
    tolerant.allow_truncated_tail = true;
    EXPECT_THAT(ReadAll(&end, tolerant), ElementsAre("first"));
    EXPECT_TRUE(absl::IsOutOfRange(end)) << end;
  }
}

TEST_F(RecordReaderTest, OversizedRecordIsDataLoss) {
  WriteFile(FrameRecord(std::string(100, 'x')));
  RecordReaderOptions small;
  small.max_record_bytes = 99;
  absl::Status end;
  EXPECT_TRUE(ReadAll(&end, small).empty());
  ASSERT_TRUE(absl::IsDataLoss(end)) << end;
  EXPECT_THAT(end.message(), HasSubstr("claims 100 bytes"));
}

}  // namespace
}  // namespace pstrain
