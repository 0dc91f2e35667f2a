#include "common/data/data_format.h"

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

// A source added to the proto without its row would be refused by
// validation as unknown and missing from every list a user is shown.
TEST(DataFormatTest, EverySourceOfTheProtoHasOneRowUnderItsFieldName) {
  const google::protobuf::OneofDescriptor* oneof = DataSpec::descriptor()->FindOneofByName("source");
  ASSERT_NE(oneof, nullptr);
  ASSERT_EQ(DataFormats().size(), static_cast<size_t>(oneof->field_count()));
  for (int i = 0; i < oneof->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = oneof->field(i);
    const DataFormat* format =
        DataFormatOf(static_cast<DataSpec::SourceCase>(field->number()));
    ASSERT_NE(format, nullptr) << field->name();
    EXPECT_EQ(format->name, field->name());
    EXPECT_EQ(&DataFormats()[i], format) << "rows follow the proto's order";
  }
  EXPECT_EQ(DataFormatOf(DataSpec::SOURCE_NOT_SET), nullptr);
}

TEST(DataFormatTest, DeclaresWhatEachSourceGives) {
  DataSpec tfrecord;
  tfrecord.mutable_tfrecord()->add_dense_features("x");
  EXPECT_FALSE(DataFormatOf(DataSpec::kTfrecord)->carries_ids(tfrecord));
  tfrecord.mutable_tfrecord()->add_sparse_features("ids");
  EXPECT_TRUE(DataFormatOf(DataSpec::kTfrecord)->carries_ids(tfrecord));
  EXPECT_TRUE(DataFormatOf(DataSpec::kFashionMnist)->images);
  EXPECT_FALSE(DataFormatOf(DataSpec::kSyntheticClicks)->streams);
  EXPECT_EQ(JoinNames(DataFormatNames([](const DataFormat& f) { return f.streams; }), "and"),
            "csv, libsvm, tfrecord, and criteo");
}

TEST(DataFormatTest, JoinsNamesAsASentenceDoes) {
  EXPECT_EQ(JoinNames({}, "or"), "");
  EXPECT_EQ(JoinNames({"a"}, "or"), "a");
  EXPECT_EQ(JoinNames({"a", "b"}, "and"), "a and b");
  EXPECT_EQ(JoinNames({"a", "b", "c"}, "or"), "a, b, or c");
}

}  // namespace
}  // namespace pstrain
