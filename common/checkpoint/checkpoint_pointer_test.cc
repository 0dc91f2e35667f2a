#include "common/checkpoint/checkpoint_pointer.h"

#include <string>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(CheckpointPointerTest, RoundTrip) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointPointer(env, model_dir).status()));
  ASSERT_TRUE(WriteCheckpointPointer(env, model_dir, 1200).ok());
  EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 1200);
  ASSERT_TRUE(WriteCheckpointPointer(env, model_dir, 1300).ok());
  EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 1300);
  ASSERT_TRUE(RemoveCheckpointPointer(env, model_dir).ok());
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointPointer(env, model_dir).status()));
  EXPECT_TRUE(RemoveCheckpointPointer(env, model_dir).ok());
}

TEST(CheckpointPointerTest, IsOneLineOfText) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  ASSERT_TRUE(WriteCheckpointPointer(env, model_dir, 42).ok());
  absl::StatusOr<std::unique_ptr<SequentialFile>> file =
      env.NewSequentialFile(model_dir + "/checkpoint");
  ASSERT_TRUE(file.ok());
  char scratch[16];
  EXPECT_EQ(*(*file)->Read(sizeof(scratch), scratch), "42\n");
}

TEST(CheckpointPointerTest, DamagedPointerIsDataLossNamingTheFile) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  for (const std::string& bad :
       {std::string("ckpt-12\n"), std::string(""), std::string("-3"), std::string(1000, '7')}) {
    ASSERT_TRUE(WriteTestFile(env, model_dir + "/checkpoint", bad).ok());
    const absl::StatusOr<int64_t> step = ReadCheckpointPointer(env, model_dir);
    ASSERT_TRUE(absl::IsDataLoss(step.status())) << bad << ": " << step.status();
    EXPECT_THAT(step.status().message(), HasSubstr(model_dir + "/checkpoint"));
  }
}

}  // namespace
}  // namespace pstrain
