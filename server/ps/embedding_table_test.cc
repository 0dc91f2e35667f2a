#include "server/ps/embedding_table.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr int kDim = 4;

std::unique_ptr<Optimizer> Sgd() { return Optimizer::Create(OptimizerSpec()).value(); }

std::unique_ptr<Optimizer> MomentumOpt() {
  OptimizerSpec spec;
  spec.mutable_momentum()->set_momentum(0.5f);
  return Optimizer::Create(spec).value();
}

Initializer Init() {
  InitializerSpec spec;
  spec.set_kind(INITIALIZER_KIND_UNIFORM);
  spec.set_min(-1);
  spec.set_max(1);
  const int64_t shape[] = {0, kDim};
  return Initializer(spec, 5, "emb", shape);
}

std::vector<float> Row(const EmbeddingTable& t, int64_t id) {
  std::vector<float> out(kDim);
  t.Lookup({id}, out.data());
  return out;
}

std::vector<float> Initial(int64_t id) {
  std::vector<float> out(kDim);
  Init().FillRow(id, absl::MakeSpan(out));
  return out;
}

void Push(EmbeddingTable& t, const Optimizer& opt, std::vector<int64_t> ids, float g) {
  std::vector<float> grad(ids.size() * kDim, g);
  t.Apply(opt, {1.0f, 1, 1.0f}, ids, grad.data());
}

TEST(EmbeddingTableTest, RowsAreCreatedOnlyWhenUpdated) {
  auto opt = MomentumOpt();
  EmbeddingTableOptions o;
  o.dim = kDim;
  o.vocabulary_size = 100;
  EmbeddingTable t("emb", o, Init(), *opt);
  EXPECT_EQ(Row(t, 7), Initial(7));
  EXPECT_EQ(t.stats().rows, 0);
  Push(t, *opt, {7, 9}, 0.5f);
  EXPECT_EQ(t.stats().rows, 2);
  EXPECT_EQ(t.stats().bytes, 2 * kDim * 2 * 4);
  std::vector<float> want = Initial(7);
  for (float& v : want) v -= 0.5f;  // momentum slot = g on the first step
  EXPECT_EQ(Row(t, 7), want);
  EXPECT_EQ(Row(t, 8), Initial(8));
  // A second update of row 7 only: row 9's momentum does not decay (lazy slots).
  Push(t, *opt, {7}, 0.0f);
  for (float& v : want) v -= 0.25f;
  EXPECT_EQ(Row(t, 7), want);
  std::vector<float> nine = Initial(9);
  for (float& v : nine) v -= 0.5f;
  EXPECT_EQ(Row(t, 9), nine);
  EXPECT_EQ(t.stats().admissions, 0);  // fixed tables do not count admissions
}

TEST(EmbeddingTableTest, DynamicTableAdmitsAfterKSightings) {
  auto opt = Sgd();
  EmbeddingTableOptions o;
  o.dim = kDim;
  o.admit_after = 3;
  EmbeddingTable t("emb", o, Init(), *opt);
  const int64_t id = -1234567890123;
  Push(t, *opt, {id}, 1.0f);
  Push(t, *opt, {id}, 1.0f);
  EXPECT_EQ(Row(t, id), Initial(id));
  EXPECT_EQ(t.stats().rows, 0);
  EXPECT_EQ(t.stats().dropped_updates, 2);
  Push(t, *opt, {id}, 1.0f);
  std::vector<float> want = Initial(id);
  for (float& v : want) v -= 1.0f;  // only the admitting push is applied
  EXPECT_EQ(Row(t, id), want);
  EXPECT_EQ(t.stats().admissions, 1);
  EXPECT_EQ(t.stats().rows, 1);
}

TEST(EmbeddingTableTest, EvictsLeastRecentlyUpdatedUnderBudget) {
  auto opt = Sgd();
  EmbeddingTableOptions o;
  o.dim = kDim;
  o.max_bytes = 2 * kDim * 4;  // two rows
  EmbeddingTable t("emb", o, Init(), *opt);
  Push(t, *opt, {1}, 1.0f);
  Push(t, *opt, {2}, 1.0f);
  Push(t, *opt, {1}, 1.0f);  // 2 is now the least recently updated
  Push(t, *opt, {3}, 1.0f);
  const EmbeddingStats s = t.stats();
  EXPECT_EQ(s.rows, 2);
  EXPECT_LE(s.bytes, o.max_bytes);
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.admissions, 3);
  EXPECT_EQ(Row(t, 2), Initial(2));  // forgotten
  std::vector<float> one = Initial(1);
  for (float& v : one) v -= 2.0f;
  EXPECT_EQ(Row(t, 1), one);
}

TEST(EmbeddingTableTest, EvictionWithinOnePushNeverMixesRows) {
  auto opt = Sgd();
  EmbeddingTableOptions o;
  o.dim = kDim;
  o.max_bytes = 2 * kDim * 4;  // two rows
  EmbeddingTable t("emb", o, Init(), *opt);
  const std::vector<int64_t> ids = {1, 2, 3, 4};
  std::vector<float> grad;
  for (int64_t id : ids) grad.insert(grad.end(), kDim, static_cast<float>(id));
  t.Apply(*opt, {1.0f, 1, 1.0f}, ids, grad.data());
  EXPECT_EQ(t.stats().rows, 2);
  EXPECT_EQ(t.stats().evictions, 2);
  // The rows kept hold their own update, not an evicted row's.
  for (int64_t id : {3, 4}) {
    std::vector<float> want = Initial(id);
    for (float& v : want) v -= static_cast<float>(id);
    EXPECT_EQ(Row(t, id), want) << id;
  }
  EXPECT_EQ(Row(t, 1), Initial(1));
}

TEST(EmbeddingTableTest, VisitAndReplaceKeepRowsSlotsAndOrder) {
  auto opt = MomentumOpt();
  EmbeddingTableOptions o;
  o.dim = kDim;
  o.max_bytes = 1 << 20;  // a budget (not reached): rows are kept in LRU order
  EmbeddingTable t("emb", o, Init(), *opt);
  for (int64_t id : {5, 3, 9, 3}) Push(t, *opt, {id}, static_cast<float>(id));
  std::vector<int64_t> ids;
  std::vector<float> rows;
  t.VisitRows([&](int64_t id, const float* row) {
    ids.push_back(id);
    rows.insert(rows.end(), row, row + t.row_floats());
  });
  EXPECT_THAT(ids, ::testing::ElementsAre(5, 9, 3));
  EmbeddingTable copy("emb", o, Init(), *opt);
  copy.Replace(ids, rows);
  std::vector<int64_t> ids2;
  std::vector<float> rows2;
  copy.VisitRows([&](int64_t id, const float* row) {
    ids2.push_back(id);
    rows2.insert(rows2.end(), row, row + copy.row_floats());
  });
  EXPECT_EQ(ids, ids2);
  EXPECT_EQ(rows, rows2);
  EXPECT_EQ(copy.stats().rows, 3);
}

}  // namespace
}  // namespace pstrain
