#include "common/config/internal/json_error.h"

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace config_internal {
namespace {

namespace pb = ::google::protobuf;

TEST(JsonErrorMessageTest, KeepsTheProblemAndTheTextOnOneLine) {
  pb::Struct root;
  pb::util::Status status = pb::util::JsonStringToMessage("{\"mode\": }", &root);
  ASSERT_FALSE(status.ok());
  const std::string message = JsonErrorMessage(status);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message, "Unexpected token. (near '}')");
}

TEST(JsonErrorMessageTest, PassesOneLineMessagesAsTheyAre) {
  EXPECT_EQ(JsonErrorMessage(pb::util::InvalidArgumentError("bogus: Cannot find field.")),
            "bogus: Cannot find field.");
}

}  // namespace
}  // namespace config_internal
}  // namespace pstrain
