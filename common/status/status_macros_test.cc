#include "common/status/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

int calls = 0;

absl::Status FailWith(absl::StatusCode code) {
  ++calls;
  return absl::Status(code, "boom");
}

absl::StatusOr<std::unique_ptr<std::string>> MakeString(bool ok) {
  ++calls;
  if (!ok) return absl::NotFoundError("no string");
  return std::make_unique<std::string>("value");
}

absl::Status ReturnIfError(absl::StatusCode code, bool* reached_end) {
  RETURN_IF_ERROR(FailWith(code));
  *reached_end = true;
  return absl::OkStatus();
}

absl::Status AssignOrReturn(bool ok, std::string* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<std::string> value, MakeString(ok));
  *out = *value;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorPassesOkThrough) {
  bool reached_end = false;
  calls = 0;
  EXPECT_TRUE(ReturnIfError(absl::StatusCode::kOk, &reached_end).ok());
  EXPECT_TRUE(reached_end);
  EXPECT_EQ(calls, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsTheErrorUnchanged) {
  bool reached_end = false;
  absl::Status status = ReturnIfError(absl::StatusCode::kDataLoss, &reached_end);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "boom");
  EXPECT_FALSE(reached_end);
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValue) {
  std::string out;
  calls = 0;
  EXPECT_TRUE(AssignOrReturn(true, &out).ok());
  EXPECT_EQ(out, "value");
  EXPECT_EQ(calls, 1);
}

TEST(StatusMacrosTest, AssignOrReturnReturnsTheError) {
  std::string out = "untouched";
  absl::Status status = AssignOrReturn(false, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out, "untouched");
}

}  // namespace
}  // namespace pstrain
