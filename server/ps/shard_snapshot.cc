#include "server/ps/shard_snapshot.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/memory_env.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// What the shard file says of variable `v` besides its numbers.
ShardFileVariable Describe(const ShardVariable& v) {
  ShardFileVariable d;
  d.name = v.spec.name();
  d.kind = v.embedding ? VARIABLE_KIND_EMBEDDING : VARIABLE_KIND_DENSE;
  d.dims.assign(v.spec.shape().dims().begin(), v.spec.shape().dims().end());
  return d;
}

absl::Status WriteVariable(ShardFileWriter& file, const ShardVariable& v) {
  ShardFileVariable d = Describe(v);
  if (!v.embedding) {
    d.num_elements = v.num_elements;
    absl::Status status;
    v.dense->Visit(
        [&](absl::Span<const float> values, const std::vector<absl::Span<const float>>& slots) {
          status = file.WriteDenseVariable(d, values, slots);
        });
    return status;
  }
  const EmbeddingTable& t = *v.table;
  d.num_rows = t.stats().rows;
  d.row_floats = t.row_floats();
  RETURN_IF_ERROR(file.BeginTable(d));
  absl::Status status;
  t.VisitRows([&](int64_t id, const float* row) {
    if (status.ok()) status = file.AppendRow(id, row);
  });
  RETURN_IF_ERROR(status);
  return file.EndTable();
}

// A variable's replacement contents, read and checked before any is
// installed.
struct ParsedVariable {
  int index = -1;
  FloatBuffer values;
  std::vector<FloatBuffer> slots;
  std::vector<int64_t> ids;
  std::vector<float> rows;
};

// Writes every record of a paused shard, with `counters` (read in the
// same pause), to `file`, which is then ready to Commit.
absl::Status WritePausedShard(ShardFileWriter& file, const ParameterShard& shard,
                              const Optimizer& optimizer, const ShardCounters& counters,
                              int64_t global_step) {
  ShardFileHeader header;
  header.job_id = shard.job_id();
  header.shard_index = shard.shard_index();
  header.num_shards = shard.num_shards();
  header.version = counters.version;
  header.global_step = global_step;
  header.optimizer = optimizer.name();
  header.num_slots = optimizer.num_slots();
  header.num_variables = shard.num_variables();
  RETURN_IF_ERROR(file.WriteHeader(header));
  for (int i = 0; i < shard.num_variables(); ++i) {
    RETURN_IF_ERROR(WriteVariable(file, shard.variable(i)));
  }
  return file.WriteDedupState(EncodeExactlyOnceRecord(counters.dedup, counters.ledger));
}

// Where a state travelling in memory is written and read.
constexpr char kStatePath[] = "/state";

}  // namespace

absl::StatusOr<SnapshotInfo> WriteShardSnapshot(Env& env, ParameterShard& shard,
                                                const std::string& path, int64_t global_step) {
  ASSIGN_OR_RETURN(std::unique_ptr<ShardFileWriter> file, ShardFileWriter::Create(env, path));
  ASSIGN_OR_RETURN(const std::unique_ptr<Optimizer> optimizer,
                   Optimizer::Create(shard.request().optimizer()));
  shard.PauseUpdates();
  const ShardCounters counters = shard.counters();
  const absl::Status status = WritePausedShard(*file, shard, *optimizer, counters, global_step);
  shard.ResumeUpdates();
  RETURN_IF_ERROR(status);
  // Synced and renamed into place with updates running again.
  ASSIGN_OR_RETURN(const ShardFileInfo info, file->Commit());
  return SnapshotInfo{info.bytes, info.crc32c, counters.version, counters.ledger};
}

absl::StatusOr<ShardState> CutShardState(ParameterShard& shard, std::shared_ptr<UpdateLog> log,
                                         absl::Time deadline) {
  MemoryEnv memory;
  ASSIGN_OR_RETURN(std::unique_ptr<ShardFileWriter> file,
                   ShardFileWriter::Create(memory, kStatePath));
  ASSIGN_OR_RETURN(const std::unique_ptr<Optimizer> optimizer,
                   Optimizer::Create(shard.request().optimizer()));
  if (!shard.PauseAtRoundBoundary(deadline)) {
    return absl::UnavailableError(absl::StrCat(
        "job ", shard.job_id(), ": shard ", shard.shard_index(),
        " found no moment between sync rounds before the deadline (a round is still open), "
        "or the job was dropped: its state was not copied"));
  }
  const ShardCounters counters = shard.CutLog(std::move(log));
  // The copy is made with updates paused; it goes out after they resume.
  const absl::Status status = WritePausedShard(*file, shard, *optimizer, counters, 0);
  shard.ResumeUpdates();
  RETURN_IF_ERROR(status);
  ASSIGN_OR_RETURN(const ShardFileInfo info, file->Commit());
  ASSIGN_OR_RETURN(std::string bytes, memory.Contents(kStatePath));
  return ShardState{std::move(bytes), info.crc32c, counters.version};
}

absl::Status RestoreShardState(ParameterShard& shard, std::string bytes, uint32_t crc32c) {
  MemoryEnv memory;
  ShardFileExpectation expect;
  expect.bytes = static_cast<int64_t>(bytes.size());
  expect.crc32c = crc32c;
  expect.check_crc32c = true;
  memory.PutFile(kStatePath, std::move(bytes));
  return RestoreShardSnapshot(memory, shard, kStatePath, expect).status();
}

absl::StatusOr<SnapshotInfo> RestoreShardSnapshot(Env& env, ParameterShard& shard,
                                                  const std::string& path,
                                                  const ShardFileExpectation& expect) {
  ASSIGN_OR_RETURN(const std::unique_ptr<ShardFileReader> file,
                   ShardFileReader::Open(env, path, expect));
  auto mismatch = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(path, " does not fit this shard: ", what));
  };
  const ShardFileHeader& header = file->header();
  if (header.shard_index != shard.shard_index() || header.num_shards != shard.num_shards()) {
    return mismatch(absl::StrCat("it is shard ", header.shard_index, " of ", header.num_shards,
                                 ", this is shard ", shard.shard_index(), " of ",
                                 shard.num_shards()));
  }
  ASSIGN_OR_RETURN(const std::unique_ptr<Optimizer> optimizer,
                   Optimizer::Create(shard.request().optimizer()));
  if (header.optimizer != optimizer->name() || header.num_slots != optimizer->num_slots()) {
    return mismatch(
        absl::StrCat("it holds ", header.optimizer, " slots; the job uses ", optimizer->name()));
  }
  if (header.num_variables != shard.num_variables()) {
    return mismatch(absl::StrCat("it holds ", header.num_variables, " variables; this shard holds ",
                                 shard.num_variables()));
  }

  // Variables, copied into fresh buffers before anything is replaced.
  std::vector<ParsedVariable> parsed;
  std::vector<bool> seen(shard.num_variables());
  for (int i = 0; i < file->num_variables(); ++i) {
    const ShardFileVariable& in = file->variable(i);
    absl::StatusOr<int> found = shard.FindVariable(in.name);
    if (!found.ok() || seen[*found]) return mismatch(absl::StrCat("variable \"", in.name, "\""));
    seen[*found] = true;
    const ShardVariable& v = shard.variable(*found);
    const ShardFileVariable expected = Describe(v);
    if (in.kind != expected.kind || in.dims != expected.dims) {
      return mismatch(absl::StrCat("variable \"", in.name, "\" has another kind or shape"));
    }
    ParsedVariable p;
    p.index = *found;
    if (!v.embedding) {
      p.values = FloatBuffer(v.num_elements);
      file->CopyDense(i, 0, p.values.data());
      for (int k = 0; k < header.num_slots; ++k) {
        p.slots.emplace_back(v.num_elements);
        file->CopyDense(i, k + 1, p.slots.back().data());
      }
    } else {
      p.ids.resize(in.num_rows);
      p.rows.resize(in.num_rows * in.row_floats);
      file->CopyRows(i, p.ids.data(), p.rows.data());
    }
    parsed.push_back(std::move(p));
  }
  ShardCounters counters;
  counters.version = header.version;
  ASSIGN_OR_RETURN(ExactlyOnceRecord record, DecodeExactlyOnceRecord(file->dedup_state()));
  counters.dedup = std::string(record.dedup);
  counters.ledger = std::move(record.ledger);
  // Decoded once here so that a bad dedup record or ledger refuses the file
  // before anything is replaced.
  RETURN_IF_ERROR(PushDedup::Parse(counters.dedup, 1).status());
  RETURN_IF_ERROR(AppliedPushLedger::FromProto(counters.ledger, 0).status());

  shard.PauseUpdates();
  for (ParsedVariable& p : parsed) {
    const ShardVariable& v = shard.variable(p.index);
    if (v.embedding) {
      v.table->Replace(p.ids, p.rows);
    } else {
      v.dense->Replace(std::move(p.values), std::move(p.slots));
    }
  }
  absl::Status status = shard.RestoreCounters(counters);
  shard.ResumeUpdates();
  RETURN_IF_ERROR(status);
  return SnapshotInfo{file->info().bytes, file->info().crc32c, header.version, counters.ledger};
}

}  // namespace pstrain
