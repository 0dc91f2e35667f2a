#include "server/ps/testing/wired_shard.h"

#include <utility>

#include "gtest/gtest.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/push_assembler.h"

namespace pstrain {
namespace {

// The job's shard and the index of its variable `name`, or a test failure.
bool Find(ShardStore& store, const std::string& job_id, const std::string& name,
          std::shared_ptr<ParameterShard>* shard, int* variable) {
  absl::StatusOr<std::shared_ptr<ParameterShard>> job = store.GetJob(job_id, 0);
  if (!job.ok()) {
    ADD_FAILURE() << job.status();
    return false;
  }
  absl::StatusOr<int> index = (*job)->FindVariable(name);
  if (!index.ok()) {
    ADD_FAILURE() << index.status();
    return false;
  }
  *shard = *std::move(job);
  *variable = *index;
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WiredShard>> WiredShard::Start(InProcessShardOptions options) {
  std::unique_ptr<WiredShard> wired(new WiredShard());
  absl::StatusOr<std::unique_ptr<InProcessShard>> shard = InProcessShard::Start(std::move(options));
  if (!shard.ok()) return shard.status();
  wired->shard_ = *std::move(shard);
  absl::StatusOr<std::unique_ptr<FaultyWire>> wire = FaultyWire::Start(wired->shard_->address());
  if (!wire.ok()) return wire.status();
  wired->wire_ = *std::move(wire);
  return wired;
}

absl::Status WiredShard::Create(const CreateVariablesRequest& request) {
  return store().CreateVariables(request).status();
}

PushResult WiredShard::PushFromElsewhere(PushRequest push) {
  std::unique_ptr<PushPart> part =
      store().pushes().StartPart(store().GetJob(push.job_id(), push.generation()), push);
  PushPart::Step step = part->Add(push);
  EXPECT_TRUE(step.finished) << "the push is not one message";
  return step.reply.value_or(PushResult());
}

std::vector<float> WiredShard::Dense(const std::string& job_id, const std::string& name) {
  std::shared_ptr<ParameterShard> shard;
  int variable = 0;
  if (!Find(store(), job_id, name, &shard, &variable)) return {};
  std::vector<float> values(shard->variable(variable).num_elements);
  const absl::Status read = shard->ReadDense(variable, 0, absl::MakeSpan(values));
  if (!read.ok()) {
    ADD_FAILURE() << read;
    return {};
  }
  return values;
}

std::vector<float> WiredShard::Row(const std::string& job_id, const std::string& table,
                                   int64_t id) {
  std::shared_ptr<ParameterShard> shard;
  int variable = 0;
  if (!Find(store(), job_id, table, &shard, &variable)) return {};
  std::vector<float> row(shard->variable(variable).row_width);
  const int64_t ids[] = {id};
  const absl::Status read = shard->ReadRows(variable, ids, row.data());
  if (!read.ok()) {
    ADD_FAILURE() << read;
    return {};
  }
  return row;
}

int64_t WiredShard::Version(const std::string& job_id) {
  absl::StatusOr<std::shared_ptr<ParameterShard>> job = store().GetJob(job_id, 0);
  if (!job.ok()) {
    ADD_FAILURE() << job.status();
    return 0;
  }
  return (*job)->version();
}

PushLedger WiredShard::Ledger(const std::string& job_id) {
  ReadPushLedgerRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<PushLedger> ledger = store().ReadPushLedger(request);
  if (!ledger.ok()) {
    ADD_FAILURE() << ledger.status();
    return PushLedger();
  }
  return *std::move(ledger);
}

}  // namespace pstrain
