// tf.Example records become examples as the source's feature names say;
// every way a record can disagree with them is refused, naming the feature.

#include "common/data/tf_example_decoder.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TfRecordSource Spec() {
  TfRecordSource spec;
  spec.add_dense_features("pixels");
  spec.add_dense_features("age");
  spec.add_sparse_features("country");
  spec.add_sparse_features("ad_id");
  spec.set_hash_buckets(1000);
  spec.set_label("clicked");
  return spec;
}

tensorflow::Feature Floats(std::initializer_list<float> values) {
  tensorflow::Feature feature;
  for (float v : values) feature.mutable_float_list()->add_value(v);
  return feature;
}

tensorflow::Feature Ints(std::initializer_list<int64_t> values) {
  tensorflow::Feature feature;
  for (int64_t v : values) feature.mutable_int64_list()->add_value(v);
  return feature;
}

tensorflow::Feature Bytes(std::initializer_list<const char*> values) {
  tensorflow::Feature feature;
  for (const char* v : values) feature.mutable_bytes_list()->add_value(v);
  return feature;
}

// A record that fits Spec().
tensorflow::Example Record() {
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  features["pixels"] = Floats({0.5f, 1.5f});
  features["age"] = Ints({42});
  features["country"] = Bytes({"NZ"});
  features["ad_id"] = Ints({123456789012});
  features["clicked"] = Ints({1});
  features["unused"] = Bytes({"ignored"});
  return example;
}

std::string Refusal(const tensorflow::Example& example) {
  TfExampleDecoder decoder(Spec());
  InMemorySource::Examples examples;
  absl::Status appended = decoder.Append(example.SerializeAsString(), &examples);
  EXPECT_EQ(appended.code(), absl::StatusCode::kInvalidArgument) << appended;
  EXPECT_EQ(examples.num_examples, 0);
  return std::string(appended.message());
}

TEST(TfExampleDecoderTest, MapsNamedFeatures) {
  TfExampleDecoder decoder(Spec());
  InMemorySource::Examples examples;
  ASSERT_TRUE(decoder.Append(Record().SerializeAsString(), &examples).ok());
  tensorflow::Example second = Record();
  (*second.mutable_features()->mutable_feature())["clicked"] = Floats({0});
  ASSERT_TRUE(decoder.Append(second.SerializeAsString(), &examples).ok());
  decoder.Finish(&examples);

  EXPECT_EQ(examples.num_examples, 2);
  EXPECT_EQ(examples.dense_dim, 3);
  EXPECT_THAT(examples.dense_floats, ElementsAre(0.5f, 1.5f, 42, 0.5f, 1.5f, 42));
  EXPECT_THAT(examples.labels, ElementsAre(1, 0));
  EXPECT_THAT(examples.row_splits, ElementsAre(0, 2, 4));
  const int64_t ad = CategoricalId("ad_id", int64_t{123456789012}, 1000);
  EXPECT_THAT(examples.sparse_ids, ElementsAre(CategoricalId("country", "NZ", 1000), ad,
                                               CategoricalId("country", "NZ", 1000), ad));
  EXPECT_EQ(examples.sparse_dim, 1000);
  EXPECT_EQ(examples.num_fields, 2);  // one value of each categorical feature
}

TEST(TfExampleDecoderTest, CategoricalIdsAreStableAndPerFeature) {
  // Fixed values: ids pick embedding rows that checkpoints keep.
  EXPECT_EQ(CategoricalId("country", "NZ", int64_t{1} << 62), 184451485684104509);
  EXPECT_NE(CategoricalId("country", "NZ", 1 << 20), CategoricalId("region", "NZ", 1 << 20));
  EXPECT_NE(CategoricalId("ab", "c", 1 << 20), CategoricalId("a", "bc", 1 << 20));
  // An int64 value is hashed as its 8 little-endian bytes.
  EXPECT_EQ(CategoricalId("ad_id", int64_t{0x0807060504030201}, 1 << 20),
            CategoricalId("ad_id", "\x01\x02\x03\x04\x05\x06\x07\x08", 1 << 20));
}

TEST(TfExampleDecoderTest, CategoricalFeaturesMayHoldAnyNumberOfValues) {
  TfExampleDecoder decoder(Spec());
  InMemorySource::Examples examples;
  tensorflow::Example record = Record();
  auto& features = *record.mutable_features()->mutable_feature();
  features["country"] = Bytes({"NZ", "AU"});
  features.erase("ad_id");
  ASSERT_TRUE(decoder.Append(record.SerializeAsString(), &examples).ok());
  decoder.Finish(&examples);
  EXPECT_THAT(examples.row_splits, ElementsAre(0, 2));
  EXPECT_EQ(examples.num_fields, 0);  // not one id per field
}

TEST(TfExampleDecoderTest, RefusesRecordsThatDoNotFit) {
  EXPECT_THAT(Refusal(tensorflow::Example()),
              HasSubstr("feature 'clicked' (the label) is missing"));

  tensorflow::Example record = Record();
  auto* features = record.mutable_features()->mutable_feature();
  (*features)["clicked"] = Floats({1, 0});
  EXPECT_THAT(Refusal(record), HasSubstr("feature 'clicked' (the label) holds 2 values, not one"));
  (*features)["clicked"] = Bytes({"yes"});
  EXPECT_THAT(Refusal(record),
              HasSubstr("feature 'clicked' (the label) is a bytes_list; a label is a float_list "
                        "or an int64_list"));
  (*features)["clicked"] = Floats({NAN});
  EXPECT_THAT(Refusal(record), HasSubstr("(the label) is nan, not a finite value"));

  record = Record();
  features = record.mutable_features()->mutable_feature();
  features->erase("age");
  EXPECT_THAT(Refusal(record),
              HasSubstr("feature 'age' is missing; a dense feature must be in every record"));
  (*features)["age"] = Bytes({"42"});
  EXPECT_THAT(Refusal(record), HasSubstr("feature 'age' is a bytes_list; a dense feature"));
  (*features)["age"] = tensorflow::Feature();
  EXPECT_THAT(Refusal(record), HasSubstr("feature 'age' is empty (no value list)"));
  (*features)["age"] = Floats({INFINITY});
  EXPECT_THAT(Refusal(record), HasSubstr("feature 'age' holds inf, not a finite value"));

  record = Record();
  (*record.mutable_features()->mutable_feature())["ad_id"] = Floats({1.5});
  EXPECT_THAT(Refusal(record), HasSubstr("feature 'ad_id' is a float_list; a categorical"));

  EXPECT_THAT(Refusal(tensorflow::Example()), HasSubstr("clicked"));
  TfExampleDecoder decoder(Spec());
  InMemorySource::Examples examples;
  EXPECT_THAT(std::string(decoder.Append("\xff\xff garbage", &examples).message()),
              HasSubstr("does not parse as a tf.Example"));
}

TEST(TfExampleDecoderTest, RefusesADenseFeatureWhoseWidthChanges) {
  TfExampleDecoder decoder(Spec());
  InMemorySource::Examples examples;
  ASSERT_TRUE(decoder.Append(Record().SerializeAsString(), &examples).ok());
  tensorflow::Example wider = Record();
  (*wider.mutable_features()->mutable_feature())["pixels"] = Floats({1, 2, 3});
  absl::Status appended = decoder.Append(wider.SerializeAsString(), &examples);
  EXPECT_THAT(std::string(appended.message()),
              HasSubstr("feature 'pixels' holds 3 values; the data set's first record held 2"));
  EXPECT_EQ(examples.num_examples, 1);
  EXPECT_EQ(examples.dense_floats.size(), 3u);
}

}  // namespace
}  // namespace pstrain
