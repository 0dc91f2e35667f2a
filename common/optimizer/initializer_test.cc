#include "common/optimizer/initializer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace pstrain {
namespace {

InitializerSpec Spec(InitializerKind kind) {
  InitializerSpec s;
  s.set_kind(kind);
  return s;
}

std::vector<float> Dense(const Initializer& init, int64_t offset, int64_t n) {
  std::vector<float> v(n);
  init.FillDense(offset, absl::MakeSpan(v));
  return v;
}

TEST(InitializerTest, ZerosAndConstant) {
  const int64_t shape[] = {4};
  EXPECT_THAT(Dense(Initializer(InitializerSpec(), 1, "w", shape), 0, 4), ::testing::Each(0.0f));
  InitializerSpec c = Spec(INITIALIZER_KIND_CONSTANT);
  c.set_value(2.5f);
  EXPECT_THAT(Dense(Initializer(c, 1, "w", shape), 0, 4), ::testing::Each(2.5f));
}

TEST(InitializerTest, SameSeedAndNameGiveSameValuesAtAnyOffset) {
  InitializerSpec s = Spec(INITIALIZER_KIND_NORMAL);
  s.set_stddev(1.0f);
  s.set_seed(7);
  const int64_t shape[] = {100};
  const Initializer a(s, 3, "dense/kernel", shape);
  const Initializer b(s, 3, "dense/kernel", shape);
  const std::vector<float> whole = Dense(a, 0, 100);
  EXPECT_EQ(whole, Dense(b, 0, 100));
  const std::vector<float> tail = Dense(b, 60, 40);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), whole.begin() + 60));
  // Another name, initializer seed or job seed draws other values.
  EXPECT_NE(whole, Dense(Initializer(s, 3, "dense/bias", shape), 0, 100));
  EXPECT_NE(whole, Dense(Initializer(s, 4, "dense/kernel", shape), 0, 100));
  s.set_seed(8);
  EXPECT_NE(whole, Dense(Initializer(s, 3, "dense/kernel", shape), 0, 100));
}

TEST(InitializerTest, RowsDependOnlyOnTheirId) {
  InitializerSpec s = Spec(INITIALIZER_KIND_UNIFORM);
  s.set_min(-1);
  s.set_max(1);
  const int64_t shape[] = {0, 8};
  const Initializer init(s, 0, "emb", shape);
  std::vector<float> r1(8), r2(8), r3(8);
  init.FillRow(123456789012345, absl::MakeSpan(r1));
  init.FillRow(42, absl::MakeSpan(r3));
  init.FillRow(123456789012345, absl::MakeSpan(r2));
  EXPECT_EQ(r1, r2);
  EXPECT_NE(r1, r3);
}

TEST(InitializerTest, DistributionsHaveTheirMoments) {
  constexpr int kN = 200000;
  const int64_t shape[] = {kN};
  InitializerSpec u = Spec(INITIALIZER_KIND_UNIFORM);
  u.set_min(2);
  u.set_max(4);
  InitializerSpec n = Spec(INITIALIZER_KIND_NORMAL);
  n.set_mean(1);
  n.set_stddev(3);
  InitializerSpec t = Spec(INITIALIZER_KIND_TRUNCATED_NORMAL);
  t.set_mean(-1);
  t.set_stddev(0.5f);
  for (const InitializerSpec& spec : {u, n, t}) {
    const std::vector<float> v = Dense(Initializer(spec, 9, "x", shape), 0, kN);
    double sum = 0, sq = 0;
    for (float x : v) sum += x;
    const double mean = sum / kN;
    for (float x : v) sq += (x - mean) * (x - mean);
    const double sd = std::sqrt(sq / kN);
    if (spec.kind() == INITIALIZER_KIND_UNIFORM) {
      EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(2.0f), ::testing::Lt(4.0f))));
      EXPECT_NEAR(mean, 3.0, 0.01);
      EXPECT_NEAR(sd, 2.0 / std::sqrt(12.0), 0.01);
    } else if (spec.kind() == INITIALIZER_KIND_NORMAL) {
      EXPECT_NEAR(mean, 1.0, 0.03);
      EXPECT_NEAR(sd, 3.0, 0.03);
    } else {
      EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(-2.0f), ::testing::Le(0.0f))));
      EXPECT_NEAR(mean, -1.0, 0.01);
      EXPECT_NEAR(sd, 0.5 * 0.8796, 0.01);  // sd of N(0,1) truncated at +-2
    }
  }
}

TEST(InitializerTest, GlorotUsesFanInAndFanOut) {
  const int64_t shape[] = {30, 70};
  const std::vector<float> v =
      Dense(Initializer(Spec(INITIALIZER_KIND_GLOROT_UNIFORM), 0, "k", shape), 0, 2100);
  const float limit = std::sqrt(6.0f / 100.0f);
  EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(-limit), ::testing::Lt(limit))));
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.95f * limit);
}

TEST(InitializerTest, ValidateRefusesImpossibleSpecs) {
  InitializerSpec u = Spec(INITIALIZER_KIND_UNIFORM);
  u.set_min(1);
  u.set_max(1);
  EXPECT_EQ(ValidateInitializer(u).code(), absl::StatusCode::kInvalidArgument);
  InitializerSpec n = Spec(INITIALIZER_KIND_NORMAL);
  n.set_stddev(-1);
  EXPECT_EQ(ValidateInitializer(n).code(), absl::StatusCode::kInvalidArgument);
  InitializerSpec c = Spec(INITIALIZER_KIND_CONSTANT);
  c.set_value(NAN);
  EXPECT_EQ(ValidateInitializer(c).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateInitializer(Spec(static_cast<InitializerKind>(99))).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateInitializer(InitializerSpec()).ok());
}

// Checks carried over from the single-process trainer's initializer, through
// ForVariable.

VariableSpec Variable(const std::string& name, std::vector<int64_t> dims, InitializerKind kind) {
  VariableSpec spec;
  spec.set_name(name);
  spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : dims) spec.mutable_shape()->add_dims(d);
  spec.mutable_initializer()->set_kind(kind);
  spec.mutable_initializer()->set_seed(3);
  return spec;
}

std::vector<float> Init(const VariableSpec& spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape().dims()) n *= d;
  absl::StatusOr<Initializer> init = Initializer::ForVariable(spec, /*job_seed=*/0);
  EXPECT_TRUE(init.ok()) << init.status();
  std::vector<float> v(n);
  if (init.ok()) init->FillDense(0, absl::MakeSpan(v));
  return v;
}

TEST(InitializerTest, GlorotUniformBoundsAndSpread) {
  const std::vector<float> t = Init(Variable("w", {100, 50}, INITIALIZER_KIND_GLOROT_UNIFORM));
  const float limit = std::sqrt(6.0f / 150);
  double sum_sq = 0;
  for (float v : t) {
    ASSERT_LE(std::abs(v), limit);
    sum_sq += v * v;
  }
  // The variance of U(-l, l) is l^2 / 3.
  EXPECT_NEAR(sum_sq / t.size(), limit * limit / 3, 0.1 * limit * limit / 3);
}

TEST(InitializerTest, ReproducibleAndNameDependent) {
  VariableSpec a = Variable("a", {4, 4}, INITIALIZER_KIND_NORMAL);
  a.mutable_initializer()->set_stddev(1);
  VariableSpec b = a;
  b.set_name("b");
  const std::vector<float> a1 = Init(a), a2 = Init(a), b1 = Init(b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(a1[i], a2[i]);
  EXPECT_NE(a1[0], b1[0]);
}

TEST(InitializerTest, ConstantsTruncationAndRows) {
  VariableSpec c = Variable("c", {3}, INITIALIZER_KIND_CONSTANT);
  c.mutable_initializer()->set_value(0.5f);
  EXPECT_EQ(Init(c)[2], 0.5f);
  VariableSpec t = Variable("t", {1000}, INITIALIZER_KIND_TRUNCATED_NORMAL);
  t.mutable_initializer()->set_stddev(0.1f);
  const std::vector<float> tt = Init(t);
  for (int i = 0; i < 1000; ++i) ASSERT_LE(std::abs(tt[i]), 0.2f + 1e-6f);

  VariableSpec e = Variable("e", {0, 4}, INITIALIZER_KIND_UNIFORM);
  e.set_kind(VARIABLE_KIND_EMBEDDING);
  e.mutable_initializer()->set_min(-1);
  e.mutable_initializer()->set_max(1);
  const Initializer rows = Initializer::ForVariable(e, 0).value();
  std::vector<float> r1(4), r2(4), r3(4);
  rows.FillRow(12345, absl::MakeSpan(r1));
  rows.FillRow(12345, absl::MakeSpan(r2));
  rows.FillRow(12346, absl::MakeSpan(r3));
  EXPECT_EQ(r1, r2);
  EXPECT_NE(r1, r3);
}

TEST(InitializerTest, ForVariableRefusesBadParametersNamingTheVariable) {
  const absl::Status s =
      Initializer::ForVariable(Variable("u", {3}, INITIALIZER_KIND_UNIFORM), 0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("\"u\""), std::string::npos) << s;
  EXPECT_NE(s.message().find("initializer.min"), std::string::npos) << s;
}

// Values do not depend on how a variable is split: any piece drawn at its
// offset equals the same elements of the whole.
TEST(InitializerTest, PiecesAtOffsetsEqualTheWhole) {
  for (InitializerKind kind : {INITIALIZER_KIND_GLOROT_UNIFORM, INITIALIZER_KIND_NORMAL,
                               INITIALIZER_KIND_TRUNCATED_NORMAL}) {
    VariableSpec spec = Variable("layer/kernel", {37, 11}, kind);
    spec.mutable_initializer()->set_stddev(0.5f);
    const Initializer init = Initializer::ForVariable(spec, 99).value();
    std::vector<float> whole(37 * 11), pieces(37 * 11);
    init.FillDense(0, absl::MakeSpan(whole));
    for (int64_t begin = 0; begin < 37 * 11; begin += 50) {
      const int64_t n = std::min<int64_t>(50, 37 * 11 - begin);
      init.FillDense(begin, absl::MakeSpan(pieces.data() + begin, n));
    }
    EXPECT_EQ(whole, pieces) << InitializerKind_Name(kind);
  }
}

// An ONNX file holding `w` [2, 3] (raw data), `b` [3] (float_data), an
// int64 `shape` and a `bad` holding a NaN; returns its path.
std::string WriteOnnxFile() {
  onnx::ModelProto model;
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  const float w_values[] = {1, 2, 3, 4, 5, 6};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(w_values), sizeof(w_values)));
  onnx::TensorProto* b = graph->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float v : {-1.0f, 0.5f, 7.0f}) b->add_float_data(v);
  onnx::TensorProto* shape = graph->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(3);
  onnx::TensorProto* bad = graph->add_initializer();
  bad->set_name("bad");
  bad->set_data_type(onnx::TensorProto::FLOAT);
  bad->add_dims(1);
  bad->add_float_data(std::nanf(""));
  const std::string path = std::string(::testing::TempDir()) + "/initial_values.onnx";
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  return path;
}

VariableSpec FromOnnx(const std::string& path, const std::string& tensor,
                      std::vector<int64_t> dims) {
  VariableSpec spec = Variable("imported", std::move(dims), INITIALIZER_KIND_ONNX_TENSOR);
  spec.mutable_initializer()->set_onnx_path(path);
  spec.mutable_initializer()->set_onnx_tensor(tensor);
  return spec;
}

TEST(InitializerTest, OnnxTensorGivesTheFilesValuesAsDenseAndAsRows) {
  const std::string path = WriteOnnxFile();
  EXPECT_EQ(Init(FromOnnx(path, "w", {2, 3})), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Init(FromOnnx(path, "b", {3})), (std::vector<float>{-1, 0.5f, 7}));
  const Initializer init = Initializer::ForVariable(FromOnnx(path, "w", {2, 3}), 0).value();
  EXPECT_EQ(Dense(init, 4, 2), (std::vector<float>{5, 6}));
  std::vector<float> row(3);
  init.FillRow(1, absl::MakeSpan(row));
  EXPECT_EQ(row, (std::vector<float>{4, 5, 6}));
  // Copies share the values: a table keeps its initializer.
  const Initializer copy = init;
  EXPECT_EQ(Dense(copy, 0, 3), (std::vector<float>{1, 2, 3}));
}

TEST(InitializerTest, OnnxTensorRefusesWhatDoesNotFitNamingTheVariable) {
  const std::string path = WriteOnnxFile();
  auto message = [](const VariableSpec& spec) {
    return std::string(Initializer::ForVariable(spec, 0).status().message());
  };
  EXPECT_THAT(message(FromOnnx(path, "w", {3, 3})),
              ::testing::AllOf(::testing::HasSubstr("\"imported\""),
                               ::testing::HasSubstr("initializer w holds 6 values; the variable "
                                                    "has 9")));
  EXPECT_EQ(Initializer::ForVariable(FromOnnx(path, "missing", {3}), 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(message(FromOnnx(path, "missing", {3})),
              ::testing::HasSubstr("no initializer missing"));
  EXPECT_THAT(message(FromOnnx(path, "shape", {1})), ::testing::HasSubstr("is int64, not float32"));
  EXPECT_THAT(message(FromOnnx(path, "bad", {1})), ::testing::HasSubstr("not a finite value"));
  EXPECT_THAT(message(FromOnnx(path, "w", {0, 3})),
              ::testing::HasSubstr("a dynamic table has no fixed rows"));
  EXPECT_EQ(Initializer::ForVariable(FromOnnx(path + ".missing", "w", {2, 3}), 0).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(message(FromOnnx("", "w", {2, 3})),
              ::testing::HasSubstr("initializer.onnx_path and initializer.onnx_tensor are "
                                   "required"));
}

}  // namespace
}  // namespace pstrain
