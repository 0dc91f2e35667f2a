#include "common/checkpoint/shard_file.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/env.h"
#include "common/checkpoint/internal/byte_codec.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "common/checksum/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ShardFileHeader Header(int64_t num_variables, int num_slots = 2) {
  ShardFileHeader h;
  h.job_id = "job-7";
  h.shard_index = 1;
  h.num_shards = 3;
  h.version = 42;
  h.global_step = 40;
  h.optimizer = num_slots == 2 ? "adam" : "sgd";
  h.num_slots = num_slots;
  h.num_variables = num_variables;
  return h;
}

ShardFileVariable DenseVar(const std::string& name, std::vector<int64_t> dims) {
  ShardFileVariable v;
  v.name = name;
  v.kind = VARIABLE_KIND_DENSE;
  v.dims = std::move(dims);
  v.num_elements = 1;
  for (int64_t d : v.dims) v.num_elements *= d;
  return v;
}

ShardFileVariable TableVar(const std::string& name, int64_t vocabulary, int64_t dim, int64_t rows,
                           int num_slots = 2) {
  ShardFileVariable v;
  v.name = name;
  v.kind = VARIABLE_KIND_EMBEDDING;
  v.dims = {vocabulary, dim};
  v.num_rows = rows;
  v.row_floats = dim * (1 + num_slots);
  return v;
}

std::vector<float> Iota(int64_t n, float start) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + 0.25f * i;
  return v;
}

// A shard file assembled by hand from the layout shard_file.h documents.
class HandWrittenFile {
 public:
  HandWrittenFile() {
    internal::ByteWriter format;
    format.PutU32(1);
    bytes_ = "PSTRSHRD" + format.Release();
  }
  void Record(uint32_t type, const std::string& payload) {
    internal::ByteWriter r;
    r.PutU32(type);
    r.PutU64(payload.size());
    r.PutRaw(payload.data(), payload.size());
    r.PutU32(Crc32cMask(Crc32c(r.buffer())));
    bytes_ += r.Release();
  }
  void Header(const std::string& optimizer, uint32_t num_slots, uint64_t num_variables) {
    internal::ByteWriter h;
    h.PutString("job-7");
    h.PutU32(1);
    h.PutU32(3);
    h.PutI64(42);
    h.PutI64(40);
    h.PutString(optimizer);
    h.PutU32(num_slots);
    h.PutU64(num_variables);
    Record(1, h.Release());
  }
  void End(uint64_t records_before) {
    internal::ByteWriter end;
    end.PutU64(records_before);
    Record(4, end.Release());
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ShardFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return ::testing::TempDir() + "shards/" + name; }

  std::string Read(const std::string& path) {
    auto file = env_.NewSequentialFile(path);
    EXPECT_TRUE(file.ok()) << file.status();
    std::string out;
    std::vector<char> scratch(1 << 16);
    for (;;) {
      absl::StatusOr<absl::string_view> piece = (*file)->Read(scratch.size(), scratch.data());
      EXPECT_TRUE(piece.ok());
      if (!piece.ok() || piece->empty()) break;
      out.append(piece->data(), piece->size());
    }
    return out;
  }
  void Write(const std::string& path, const std::string& contents) {
    auto file = env_.NewWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(contents).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  // Writes a file with a dense variable "dense/w" [3, 5] with two slots, a
  // fixed table "emb" [100, 4] holding rows 7 and 99, an empty dynamic table
  // "dyn", and the dedup state "dedup-bytes".
  ShardFileInfo WriteSample(Env& env, const std::string& path) {
    auto writer = ShardFileWriter::Create(env, path);
    EXPECT_TRUE(writer.ok()) << writer.status();
    ShardFileWriter& w = **writer;
    EXPECT_TRUE(w.WriteHeader(Header(3)).ok());
    const std::vector<float> values = Iota(15, 1), m = Iota(15, 100), v = Iota(15, 200);
    const std::vector<absl::Span<const float>> slots = {m, v};
    EXPECT_TRUE(w.WriteDenseVariable(DenseVar("dense/w", {3, 5}), values, slots).ok());
    EXPECT_TRUE(w.BeginTable(TableVar("emb", 100, 4, 2)).ok());
    const std::vector<float> row_a = Iota(12, 10), row_b = Iota(12, 20);
    EXPECT_TRUE(w.AppendRow(7, row_a.data()).ok());
    EXPECT_TRUE(w.AppendRow(99, row_b.data()).ok());
    EXPECT_TRUE(w.EndTable().ok());
    EXPECT_TRUE(w.BeginTable(TableVar("dyn", 0, 2, 0)).ok());
    EXPECT_TRUE(w.EndTable().ok());
    EXPECT_TRUE(w.WriteDedupState("dedup-bytes").ok());
    absl::StatusOr<ShardFileInfo> info = w.Commit();
    EXPECT_TRUE(info.ok()) << info.status();
    return info.value_or(ShardFileInfo());
  }

  PosixEnv env_;
};

TEST_F(ShardFileTest, RoundTripsEveryRecord) {
  const std::string path = Path("rt/shard-00001-of-00003");
  const ShardFileInfo info = WriteSample(env_, path);
  const std::string bytes = Read(path);
  EXPECT_EQ(info.bytes, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(info.crc32c, Crc32c(bytes));
  // Only the final file is left in the folder.
  EXPECT_THAT(env_.ListDir(Path("rt")).value(), ElementsAre("shard-00001-of-00003"));

  absl::StatusOr<std::unique_ptr<ShardFileReader>> opened =
      ShardFileReader::Open(env_, path, {info.bytes, info.crc32c, true});
  ASSERT_TRUE(opened.ok()) << opened.status();
  const ShardFileReader& r = **opened;
  EXPECT_EQ(r.info().bytes, info.bytes);
  EXPECT_EQ(r.info().crc32c, info.crc32c);
  EXPECT_EQ(r.header().job_id, "job-7");
  EXPECT_EQ(r.header().shard_index, 1);
  EXPECT_EQ(r.header().num_shards, 3);
  EXPECT_EQ(r.header().version, 42);
  EXPECT_EQ(r.header().global_step, 40);
  EXPECT_EQ(r.header().optimizer, "adam");
  EXPECT_EQ(r.header().num_slots, 2);
  ASSERT_EQ(r.num_variables(), 3);
  EXPECT_EQ(r.FindVariable("emb"), 1);
  EXPECT_EQ(r.FindVariable("nope"), -1);
  EXPECT_EQ(r.dedup_state(), "dedup-bytes");

  const ShardFileVariable& w = r.variable(0);
  EXPECT_EQ(w.name, "dense/w");
  EXPECT_EQ(w.kind, VARIABLE_KIND_DENSE);
  EXPECT_THAT(w.dims, ElementsAre(3, 5));
  EXPECT_EQ(w.num_elements, 15);
  std::vector<float> out(15);
  r.CopyDense(0, 0, out.data());
  EXPECT_EQ(out, Iota(15, 1));
  r.CopyDense(0, 2, out.data());
  EXPECT_EQ(out, Iota(15, 200));

  const ShardFileVariable& emb = r.variable(1);
  EXPECT_EQ(emb.kind, VARIABLE_KIND_EMBEDDING);
  EXPECT_THAT(emb.dims, ElementsAre(100, 4));
  EXPECT_EQ(emb.num_rows, 2);
  EXPECT_EQ(emb.row_floats, 12);
  std::vector<int64_t> ids(2);
  std::vector<float> rows(24);
  r.CopyRows(1, ids.data(), rows.data());
  EXPECT_THAT(ids, ElementsAre(7, 99));
  std::vector<float> expected = Iota(12, 10);
  const std::vector<float> b = Iota(12, 20);
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(rows, expected);
  EXPECT_EQ(r.variable(2).num_rows, 0);
  EXPECT_EQ(r.variable(2).row_floats, 6);
}

// The layout is what shard_file.h documents, byte for byte: files written
// by earlier builds stay readable, and other readers can be written from it.
TEST_F(ShardFileTest, FollowsTheDocumentedLayout) {
  const std::string path = Path("layout/s");
  auto writer = ShardFileWriter::Create(env_, path).value();
  ASSERT_TRUE(writer->WriteHeader(Header(1, 0)).ok());
  const std::vector<float> values = {1.5f, -2};
  ASSERT_TRUE(writer->WriteDenseVariable(DenseVar("b", {2}), values, {}).ok());
  ASSERT_TRUE(writer->WriteDedupState("D").ok());
  ASSERT_TRUE(writer->Commit().ok());

  HandWrittenFile expected;
  expected.Header("sgd", 0, 1);
  internal::ByteWriter variable;
  variable.PutString("b");
  variable.PutU32(1);  // dense
  variable.PutU64(1);  // dims
  variable.PutI64(2);
  variable.PutU32(0);  // slots
  variable.PutU64(2);  // elements
  variable.PutRaw(values.data(), 8);
  expected.Record(2, variable.Release());
  expected.Record(3, "D");
  expected.End(3);
  EXPECT_EQ(Read(path), expected.bytes());
}

TEST_F(ShardFileTest, DamageIsRefusedNamingTheRecord) {
  WriteSample(env_, Path("bad/good"));
  const std::string good = Read(Path("bad/good"));

  Write(Path("bad/truncated"), good.substr(0, good.size() - 20));
  absl::Status s = ShardFileReader::Open(env_, Path("bad/truncated")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("truncated"));

  std::string flipped = good;
  flipped[good.find("dense/w") + 60] ^= 0x10;
  Write(Path("bad/values"), flipped);
  s = ShardFileReader::Open(env_, Path("bad/values")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("record 1 (variable \"dense/w\")"));
  EXPECT_THAT(s.message(), HasSubstr("fails its checksum"));

  flipped = good;
  flipped[good.find("emb") + 80] ^= 0x01;
  Write(Path("bad/rows"), flipped);
  s = ShardFileReader::Open(env_, Path("bad/rows")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("record 2 (variable \"emb\")"));

  flipped = good;
  flipped[good.find("dedup-bytes")] ^= 0x01;
  Write(Path("bad/dedup"), flipped);
  EXPECT_THAT(ShardFileReader::Open(env_, Path("bad/dedup")).status().message(),
              HasSubstr("record 4 (dedup state)"));

  Write(Path("bad/trailing"), good + "x");
  EXPECT_EQ(ShardFileReader::Open(env_, Path("bad/trailing")).status().code(),
            absl::StatusCode::kDataLoss);
  Write(Path("bad/magic"), "NOTASHRD" + good.substr(8));
  EXPECT_THAT(ShardFileReader::Open(env_, Path("bad/magic")).status().message(),
              HasSubstr("bad magic"));
  std::string newer = good;
  newer[8] = 2;
  Write(Path("bad/newer"), newer);
  EXPECT_EQ(ShardFileReader::Open(env_, Path("bad/newer")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ShardFileReader::Open(env_, Path("bad/none")).status().code(),
            absl::StatusCode::kNotFound);

  // Not what the manifest says.
  ShardFileExpectation size{static_cast<int64_t>(good.size()) + 1};
  EXPECT_EQ(ShardFileReader::Open(env_, Path("bad/good"), size).status().code(),
            absl::StatusCode::kDataLoss);
  ShardFileExpectation crc{static_cast<int64_t>(good.size()), Crc32c(good) ^ 1, true};
  EXPECT_EQ(ShardFileReader::Open(env_, Path("bad/good"), crc).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(ShardFileReader::Open(env_, Path("bad/good"), {0, Crc32c(good), true}).ok());
}

// A record whose checksum holds but whose contents contradict the header
// (a writer bug, or a forgery) is refused too.
TEST_F(ShardFileTest, RecordsThatContradictTheHeaderAreRefused) {
  HandWrittenFile file;
  file.Header("sgd", 0, 1);
  internal::ByteWriter variable;
  variable.PutString("w");
  variable.PutU32(1);
  variable.PutU64(1);
  variable.PutI64(3);  // three elements announced...
  variable.PutU32(0);
  variable.PutU64(2);  // ...two given
  variable.PutRaw("\0\0\0\0\0\0\0\0", 8);
  file.Record(2, variable.Release());
  file.Record(3, "");
  file.End(3);
  Write(Path("contradiction"), file.bytes());
  const absl::Status s = ShardFileReader::Open(env_, Path("contradiction")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("record 1 (variable \"w\") does not decode"));
}

TEST_F(ShardFileTest, MisuseIsRefusedAndLeavesNoFile) {
  const std::vector<float> values(15);
  {
    auto w = ShardFileWriter::Create(env_, Path("misuse/order")).value();
    EXPECT_EQ(w->WriteDenseVariable(DenseVar("dense/w", {3, 5}), values, {}).code(),
              absl::StatusCode::kFailedPrecondition);
    // Broken for good.
    EXPECT_EQ(w->WriteHeader(Header(1)).code(), absl::StatusCode::kFailedPrecondition);
  }
  {
    auto w = ShardFileWriter::Create(env_, Path("misuse/slots")).value();
    ASSERT_TRUE(w->WriteHeader(Header(1)).ok());
    EXPECT_EQ(w->WriteDenseVariable(DenseVar("dense/w", {3, 5}), values, {}).code(),
              absl::StatusCode::kFailedPrecondition);  // two slots announced
  }
  {
    auto w = ShardFileWriter::Create(env_, Path("misuse/rows")).value();
    ASSERT_TRUE(w->WriteHeader(Header(1)).ok());
    ASSERT_TRUE(w->BeginTable(TableVar("emb", 0, 4, 2)).ok());
    const std::vector<float> row(12);
    ASSERT_TRUE(w->AppendRow(1, row.data()).ok());
    EXPECT_EQ(w->EndTable().code(), absl::StatusCode::kFailedPrecondition);
  }
  {
    auto w = ShardFileWriter::Create(env_, Path("misuse/early")).value();
    ASSERT_TRUE(w->WriteHeader(Header(1)).ok());
    EXPECT_EQ(w->Commit().status().code(), absl::StatusCode::kFailedPrecondition);
  }
  {
    // Abandoned half way: as if the process stopped writing.
    auto w = ShardFileWriter::Create(env_, Path("misuse/abandoned")).value();
    ASSERT_TRUE(w->WriteHeader(Header(0)).ok());
  }
  EXPECT_TRUE(env_.ListDir(Path("misuse")).value().empty());
}

TEST_F(ShardFileTest, FailedWritesLeaveTheOldFileAndNoTemporary) {
  TestEnv env(&env_);
  const std::string path = Path("fail/shard");
  const ShardFileInfo first = WriteSample(env, path);
  env.FailOn(EnvOp::kSync, "", absl::ResourceExhaustedError("disk full"));
  auto w = ShardFileWriter::Create(env, path).value();
  ASSERT_TRUE(w->WriteHeader(Header(0)).ok());
  ASSERT_TRUE(w->WriteDedupState("").ok());
  EXPECT_EQ(w->Commit().status().code(), absl::StatusCode::kResourceExhausted);
  w.reset();
  env.ClearFailures();
  EXPECT_THAT(env_.ListDir(Path("fail")).value(), ElementsAre("shard"));
  EXPECT_EQ(ShardFileReader::Open(env_, path).value()->info().crc32c, first.crc32c);
}

}  // namespace
}  // namespace pstrain
