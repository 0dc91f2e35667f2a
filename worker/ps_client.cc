#include "worker/ps_client.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/piece/dense_piece.h"
#include "common/piece/rows_piece.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "worker/internal/incoming_answer.h"
#include "worker/internal/outgoing_request.h"
#include "worker/internal/push_pull_plan.h"
#include "worker/internal/shard_stream.h"

namespace pstrain {
namespace worker {
namespace {

// A refusal worth another try, as Unavailable is: a shard whose buffer for
// pushes being assembled is full (busy for now), or with replicas a
// process that is not the shard's primary (a failover under way: the
// worker is redirected to the new primary, where the call is retried).
bool IsRetryableRefusal(const absl::Status& refused, bool replicated) {
  const ErrorReason reason = ReasonOf(refused);
  return reason == ERROR_REASON_SHARD_BUSY ||
         (replicated && (reason == ERROR_REASON_NOT_PRIMARY || reason == ERROR_REASON_JOB_ENDED));
}

absl::Status AsUnavailable(const absl::Status& refused) {
  return WithReason(absl::UnavailableError(refused.message()), ReasonOf(refused));
}

constexpr int64_t kFloatBytes = 4;
// A lane's segment holds twice the shard's dense bytes plus this, rounded
// up to kLaneRoundBytes: room for rows, or for exchanges overlapping. An
// exchange that finds no room keeps its bytes in its messages.
constexpr int64_t kLaneSlackBytes = 4 << 20;
constexpr int64_t kLaneRoundBytes = 1 << 20;

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return WithPrefix(status, absl::StrCat(prefix, ": "));
}

std::shared_ptr<grpc::Channel> LaneChannel(const std::string& address, int lane,
                                           const ChannelSecurity& security) {
  grpc::ChannelArguments args;
  // Each lane its own connection, so parallel parts do not share one
  // TCP stream's window.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("pstrain.lane", lane);
  return CreateSecureChannel(address, security, args);
}

// Makes sure *tensor is a float32 tensor of `shape`, keeping its buffer
// when it already is.
absl::Status EnsureTensor(const Shape& shape, Tensor* tensor) {
  if (tensor->dtype() == DATA_TYPE_FLOAT32 && tensor->shape() == shape) return absl::OkStatus();
  ASSIGN_OR_RETURN(*tensor, Tensor::Create(DATA_TYPE_FLOAT32, shape));
  return absl::OkStatus();
}

// The version a pull waits for on `shard`; 0: none.
int64_t MinVersion(const PullOptions& options, int shard) {
  return shard < static_cast<int>(options.min_versions.size()) ? options.min_versions[shard] : 0;
}

// What one pull lane's answers have filled so far.
struct LaneReceipt {
  // Float32 bytes per dense variable, rows per table.
  absl::flat_hash_map<std::string, int64_t> dense_bytes;
  absl::flat_hash_map<std::string, size_t> rows;
  // Bytes of values as they travelled.
  int64_t bytes = 0;
};

// Part of an answer that does not fit what was asked: the shard's bug, not
// worth a retry.
absl::Status Misfit(absl::string_view what) { return absl::InternalError(what); }

// Reads dense value `v` of `answer` into its tensor.
absl::Status ReadDenseValue(const internal::PullLane& lane, const internal::IncomingAnswer& answer,
                            int v, PulledParameters* out, LaneReceipt* receipt) {
  const NamedTensor& value = answer.message().pull().values(v);
  if (!lane.dense_bytes.contains(value.name())) {
    return Misfit(absl::StrCat("values of \"", value.name(), "\", which it was not asked for"));
  }
  // Lookups only: every buffer was made before the lanes started.
  Tensor& target = out->dense.find(value.name())->second;
  absl::StatusOr<DensePlacement> placed =
      PlaceDensePiece(value.name(), value.dense(), answer.DenseDataSize(v), target.shape().dims());
  if (!placed.ok()) {
    return Misfit(absl::StrCat("a piece that does not fit: ", placed.status().message()));
  }
  char* to = static_cast<char*>(target.raw_data()) + placed->offset;
  if (placed->narrowed) {
    // The bytes may lie across slices: gathered first, then widened.
    std::string gathered(placed->wire_bytes, '\0');
    answer.CopyDenseData(v, gathered.data());
    WriteDensePiece(*placed, gathered.data(), to);
  } else {
    answer.CopyDenseData(v, to);
  }
  receipt->dense_bytes[value.name()] += placed->size;
  receipt->bytes += placed->wire_bytes;
  return absl::OkStatus();
}

// Reads rows value `v` of `answer` into its table's rows, at the positions
// of the ids asked for.
absl::Status ReadRowsValue(const internal::PullLane& lane, const internal::IncomingAnswer& answer,
                           int v, PulledParameters* out, LaneReceipt* receipt) {
  const NamedTensor& value = answer.message().pull().values(v);
  auto positions = lane.row_positions.find(value.name());
  if (positions == lane.row_positions.end()) {
    return Misfit(absl::StrCat("rows of \"", value.name(), "\", which it was not asked for"));
  }
  const absl::string_view values = answer.RowsValues(v);
  EmbeddingRows& target = out->rows.find(value.name())->second;
  const int64_t dim = target.values.shape().dim(1);
  const RowsTarget where{target.ids, target.values.data<float>(), dim, *positions->second};
  absl::Status fits =
      CheckRowsPiece(value.name(), value.rows(), static_cast<int64_t>(values.size()), dim);
  if (fits.ok()) {
    fits =
        ScatterRowsPiece(value.name(), value.rows(), values, where, &receipt->rows[value.name()]);
  }
  if (!fits.ok()) return Misfit(absl::StrCat("rows that do not fit: ", fits.message()));
  receipt->bytes += static_cast<int64_t>(values.size());
  return absl::OkStatus();
}

// Internal unless every value the lane asked for has arrived, once.
absl::Status CheckLaneComplete(const internal::PullLane& lane, LaneReceipt& receipt) {
  for (const auto& [name, want] : lane.dense_bytes) {
    if (receipt.dense_bytes[name] != want) {
      return Misfit(absl::StrCat(receipt.dense_bytes[name], " bytes of \"", name, "\" for ", want));
    }
  }
  for (const auto& [name, positions] : lane.row_positions) {
    if (receipt.rows[name] != positions->size()) {
      return Misfit(
          absl::StrCat(receipt.rows[name], " rows of \"", name, "\" for ", positions->size()));
    }
  }
  return absl::OkStatus();
}

// The version that ends the sync round a push computed from `base_version`
// joins.
int64_t RoundEnd(int64_t base_version) { return std::max<int64_t>(0, base_version) + 1; }

}  // namespace

struct ParameterServerClient::PushInFlight {
  absl::Time start;
  std::vector<int64_t> base_versions;
  PushSummary summary;
  // messages[s]: shard s's exchanges, which the calls point at; empty for
  // shards the push does not involve.
  std::vector<std::vector<std::vector<internal::OutgoingRequest>>> messages;
  std::vector<ShardCall> calls;
  // Every attempt of every call, held until the push is finished.
  std::deque<CallAttempt> attempts;
  // Why the push could not be started: FinishPush returns it.
  absl::Status not_started;
};

ParameterServerClient::ChannelFactory LaneChannels(ChannelSecurity security) {
  return [security = std::move(security)](const std::string& address, int lane) {
    return LaneChannel(address, lane, security);
  };
}

ParameterView PulledParameters::View() const {
  ParameterView view;
  for (const auto& [name, tensor] : dense) view.dense[name] = &tensor;
  for (const auto& [name, rows_of] : rows) view.rows[name] = &rows_of;
  return view;
}

absl::StatusOr<std::unique_ptr<ParameterServerClient>> ParameterServerClient::Create(
    std::vector<std::string> addresses, ShardSlicer slicer, ParameterServerClientOptions options,
    Clock& clock, RandomSource& random, WorkerMetrics* metrics, ChannelFactory channels) {
  if (options.job_id.empty()) return absl::InvalidArgumentError("the ps client needs a job id");
  if (options.incarnation == 0) {
    return absl::InvalidArgumentError("the ps client needs a non-zero incarnation");
  }
  if (options.chunk_bytes < kFloatBytes || options.streams_per_shard < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk_bytes must be >= 4 and streams_per_shard >= 1; got ",
                     options.chunk_bytes, " and ", options.streams_per_shard));
  }
  if (static_cast<int>(addresses.size()) != slicer.num_shards()) {
    return absl::InvalidArgumentError(absl::StrCat("got ", addresses.size(),
                                                   " parameter-server addresses for ",
                                                   slicer.num_shards(), " shards"));
  }
  if (!channels) channels = LaneChannels(ChannelSecurity());
  const size_t num_shards = addresses.size();
  std::unique_ptr<ParameterServerClient> client(
      new ParameterServerClient(std::move(addresses), std::move(slicer), std::move(options),
                                clock, random, metrics, std::move(channels)));
  client->segment_bytes_.assign(num_shards, 0);
  if (client->options_.shared_memory) {
    for (const DenseVariableSlot& slot : client->slicer_.dense()) {
      client->segment_bytes_[slot.shard] += 2 * slot.shape.num_elements() * kFloatBytes;
    }
    for (int64_t& bytes : client->segment_bytes_) {
      bytes = (bytes + kLaneSlackBytes + kLaneRoundBytes - 1) / kLaneRoundBytes * kLaneRoundBytes;
    }
  }
  absl::MutexLock l(&client->mu_);
  client->channels_.resize(client->addresses_.size());
  for (size_t s = 0; s < client->addresses_.size(); ++s) {
    for (int lane = 0; lane < client->options_.streams_per_shard; ++lane) {
      client->channels_[s].push_back(client->channel_factory_(client->addresses_[s], lane));
    }
  }
  client->streams_.assign(
      client->addresses_.size(),
      std::vector<std::shared_ptr<internal::ShardStream>>(client->options_.streams_per_shard));
  return client;
}

ParameterServerClient::ParameterServerClient(std::vector<std::string> addresses, ShardSlicer slicer,
                                             ParameterServerClientOptions options, Clock& clock,
                                             RandomSource& random, WorkerMetrics* metrics,
                                             ChannelFactory channels)
    : channel_factory_(std::move(channels)),
      slicer_(std::move(slicer)),
      options_(std::move(options)),
      clock_(clock),
      random_(random),
      metrics_(metrics) {
  absl::MutexLock l(&mu_);
  addresses_ = std::move(addresses);
}

ParameterServerClient::~ParameterServerClient() {
  Cancel();
  // Cancelled, its attempts end at once; the streams stop reading the
  // gradients it borrows once they have.
  if (push_ != nullptr) FinishPush().IgnoreError();
  std::vector<std::shared_ptr<internal::ShardStream>> streams;
  {
    absl::MutexLock l(&mu_);
    for (auto& lanes : streams_) {
      for (auto& stream : lanes) {
        if (stream != nullptr) streams.push_back(std::move(stream));
      }
    }
    streams.insert(streams.end(), retired_.begin(), retired_.end());
    retired_.clear();
  }
  for (auto& stream : streams) stream->WaitUntilDone();
}

void ParameterServerClient::Cancel() {
  std::vector<std::shared_ptr<internal::ShardStream>> streams;
  {
    absl::MutexLock l(&mu_);
    cancelled_.Stop();
    for (const auto& lanes : streams_) {
      for (const auto& stream : lanes) {
        if (stream != nullptr) streams.push_back(stream);
      }
    }
  }
  for (auto& stream : streams) stream->Break(absl::CancelledError("the ps client was cancelled"));
}

int ParameterServerClient::open_lanes() const {
  absl::MutexLock l(&mu_);
  int open = 0;
  for (const auto& lanes : streams_) {
    for (const auto& stream : lanes) {
      if (stream != nullptr && stream->lane_open()) ++open;
    }
  }
  return open;
}

std::string ParameterServerClient::ShardName(int shard) const {
  absl::MutexLock l(&mu_);
  return ShardNameLocked(shard);
}

std::string ParameterServerClient::ShardNameLocked(int shard) const {
  return absl::StrCat("ps/", shard, " (", addresses_[shard], ")");
}

void ParameterServerClient::Redirect(int shard, const std::string& address) {
  std::vector<std::shared_ptr<internal::ShardStream>> moved;
  {
    absl::MutexLock l(&mu_);
    if (addresses_[shard] == address) return;
    LOG(INFO) << "ps/" << shard << " moved from " << addresses_[shard] << " to " << address
              << " (its backup took over); calls in flight go there";
    addresses_[shard] = address;
    for (int lane = 0; lane < options_.streams_per_shard; ++lane) {
      channels_[shard][lane] = channel_factory_(address, lane);
      if (streams_[shard][lane] != nullptr) moved.push_back(streams_[shard][lane]);
    }
  }
  // Broken, they are replaced by streams to the new address at the next
  // attempt (Stream).
  for (auto& stream : moved) {
    stream->Break(absl::UnavailableError(absl::StrCat("ps/", shard, " moved to ", address)));
  }
}

std::shared_ptr<internal::ShardStream> ParameterServerClient::Stream(int shard, int lane) {
  absl::MutexLock l(&mu_);
  if (cancelled_.stopped()) return nullptr;
  std::shared_ptr<internal::ShardStream>& stream = streams_[shard][lane];
  if (stream != nullptr && !stream->broken()) return stream;
  if (stream != nullptr) {
    retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                  [](const auto& old) { return old->done(); }),
                   retired_.end());
    retired_.push_back(std::move(stream));
  }
  stream = internal::ShardStream::Open(channels_[shard][lane], ShardNameLocked(shard),
                                       LaneOptions(shard));
  return stream;
}

internal::StreamLaneOptions ParameterServerClient::LaneOptions(int shard) {
  internal::StreamLaneOptions lane;
  lane.segment_bytes = segment_bytes_[shard];
  // Named now: the lane may report from within the stream's opening, with
  // mu_ held.
  lane.on_opened = [this, name = ShardNameLocked(shard)](const absl::Status& status) {
    ReportLane(name, status);
  };
  return lane;
}

void ParameterServerClient::ReportLane(const std::string& shard_name, const absl::Status& status) {
  if (status.ok()) {
    if (!lane_reported_.exchange(true)) {
      LOG(INFO) << "pushes and pulls to " << shard_name
                << " go through shared-memory lanes (one beside each stream)";
    }
    return;
  }
  // A cancelled opening is a stream that broke or a client that stopped,
  // not a path that does not work.
  if (absl::IsCancelled(status)) return;
  if (metrics_ != nullptr) metrics_->RecordLaneFallback(absl::StatusCodeToString(status.code()));
  if (!fallback_reported_.exchange(true)) {
    LOG(INFO) << "pushes and pulls to " << shard_name
              << " go over gRPC: no shared-memory lane (" << status
              << "); later fallbacks are counted in pstrain_worker_lane_fallbacks_total";
  }
}

ParameterServerClient::CallAttempt ParameterServerClient::StartAttempt(const ShardCall& call) {
  CallAttempt attempt;
  attempt.deadline = absl::Now() + options_.call_timeout + call.extra;
  if (options_.membership_deadline) {
    // Each attempt says how long the membership holds now: a retry after a
    // shard stalled or failed over is not refused for a deadline that
    // passed meanwhile while the worker's heartbeats went on.
    const int64_t valid_until = absl::ToUnixMillis(options_.membership_deadline());
    for (std::vector<internal::OutgoingRequest>& exchange : *call.exchanges) {
      for (internal::OutgoingRequest& request : exchange) {
        if (request.message.has_push()) {
          request.message.mutable_push()->set_valid_until_unix_ms(valid_until);
        }
      }
    }
  }
  for (size_t i = 0; i < call.exchanges->size(); ++i) {
    const int lane = (call.first_lane + static_cast<int>(i)) % options_.streams_per_shard;
    std::shared_ptr<internal::ShardStream> stream = Stream(call.shard, lane);
    if (stream == nullptr) {
      // Cancelled: what was started fails with Cancelled (Cancel broke its
      // streams) and is waited for all the same.
      break;
    }
    std::shared_ptr<internal::StreamExchange> exchange = stream->Start(&(*call.exchanges)[i]);
    attempt.exchanges.emplace_back(std::move(stream), std::move(exchange));
  }
  return attempt;
}

absl::Status ParameterServerClient::FinishAttempt(const ShardCall& call, CallAttempt& attempt) {
  std::vector<absl::StatusOr<std::vector<internal::IncomingAnswer>>> answers;
  for (auto& [stream, exchange] : attempt.exchanges) {
    answers.push_back(stream->Wait(*exchange, attempt.deadline));
  }
  if (cancelled_.stopped() || answers.size() != call.exchanges->size()) {
    return absl::CancelledError("the ps client was cancelled");
  }
  return call.read(answers);
}

std::deque<ParameterServerClient::CallAttempt> ParameterServerClient::StartCalls(
    const std::vector<ShardCall>& calls) {
  std::deque<CallAttempt> attempts;
  for (const ShardCall& call : calls) attempts.push_back(StartAttempt(call));
  return attempts;
}

std::vector<absl::Status> ParameterServerClient::FinishCalls(std::vector<ShardCall>& calls,
                                                             std::deque<CallAttempt>& attempts) {
  // Every attempt, and so every lane region its exchanges placed bytes in,
  // is held until every call has ended: a shard reads a push's gradients
  // where they lie when it applies the push, and keeps a part received
  // whole from an earlier attempt rather than a retry's copy of it
  // (parameter_server.proto, PushPullRequest.lane). A deque: the attempts
  // stay where they are as retries are added.
  std::vector<absl::Status> results;
  for (size_t c = 0; c < calls.size(); ++c) results.push_back(FinishAttempt(calls[c], attempts[c]));
  for (size_t c = 0; c < calls.size(); ++c) {
    if (!absl::IsUnavailable(results[c])) continue;
    const ShardCall& call = calls[c];
    // The attempt made with the others counts as the loop's first, so the
    // next one waits out a backoff.
    absl::Status first_attempt = results[c];
    bool first = true;
    results[c] =
        RetryOnUnavailable(call.what, options_.retry, RetryContext{clock_, random_, cancelled_},
                           [&]() -> absl::Status {
                             if (first) {
                               first = false;
                               return first_attempt;
                             }
                             if (metrics_ != nullptr) metrics_->RecordRetry(call.retry_reason);
                             return FinishAttempt(call, attempts.emplace_back(StartAttempt(call)));
                           });
  }
  return results;
}

// ---------------------------------------------------------------- pull --

absl::Status ParameterServerClient::Pull(const RowIds& rows, const PullOptions& options,
                                         PulledParameters* out) {
  const absl::Time start = clock_.Now();
  RETURN_IF_ERROR(PrepareBuffers(rows, out));
  const internal::RowPositions positions = internal::SliceRows(slicer_, rows);

  const int num_shards = slicer_.num_shards();
  std::vector<std::vector<internal::PullLane>> lanes(num_shards);
  // versions[shard][lane], bytes[shard][lane]: written by one call each.
  std::vector<std::vector<int64_t>> versions(num_shards), bytes(num_shards);
  // One exchange of one request per lane; a deque, so that calls can point
  // at them as more are added.
  std::deque<std::vector<std::vector<internal::OutgoingRequest>>> requests;
  std::vector<ShardCall> calls;
  for (int s = 0; s < num_shards; ++s) {
    lanes[s] = internal::PlanShardPull(slicer_, s, rows, positions, options_.streams_per_shard,
                                       options_.parallel_min_bytes);
    versions[s].assign(lanes[s].size(), -1);
    bytes[s].assign(lanes[s].size(), 0);
    for (size_t l = 0; l < lanes[s].size(); ++l) {
      ShardCall& call = calls.emplace_back(
          PullCall(s, static_cast<int>(l), lanes[s][l], options, requests.emplace_back(1)));
      call.read = [&, s, l](auto& answers) -> absl::Status {
        if (!answers[0].ok()) return answers[0].status();
        return ReadLaneAnswer(s, lanes[s][l], *answers[0], out, &versions[s][l], &bytes[s][l]);
      };
    }
  }
  std::deque<CallAttempt> attempts = StartCalls(calls);
  const std::vector<absl::Status> results = FinishCalls(calls, attempts);
  for (size_t c = 0; c < calls.size(); ++c) {
    if (!results[c].ok()) return PullFailure(calls[c].shard, options, results[c]);
  }
  out->versions.assign(num_shards, -1);
  out->bytes = 0;
  for (int s = 0; s < num_shards; ++s) {
    for (size_t l = 0; l < lanes[s].size(); ++l) {
      out->versions[s] =
          out->versions[s] < 0 ? versions[s][l] : std::min(out->versions[s], versions[s][l]);
      out->bytes += bytes[s][l];
    }
  }
  if (metrics_ != nullptr) metrics_->RecordPull(out->bytes, clock_.Now() - start);
  return absl::OkStatus();
}

absl::Status ParameterServerClient::PrepareBuffers(const RowIds& rows,
                                                   PulledParameters* out) const {
  // Buffers first, so that the shards' answers fill disjoint parts of them
  // in parallel without a lock.
  for (const DenseVariableSlot& slot : slicer_.dense()) {
    RETURN_IF_ERROR(EnsureTensor(slot.shape, &out->dense[slot.name]));
  }
  for (const EmbeddingTableSlot& table : slicer_.tables()) {
    EmbeddingRows& target = out->rows[table.name];
    auto ids = rows.find(table.name);
    if (ids == rows.end()) {
      target.ids.clear();
    } else {
      target.ids = ids->second;
    }
    RETURN_IF_ERROR(
        EnsureTensor(Shape({static_cast<int64_t>(target.ids.size()), table.dim}), &target.values));
  }
  return absl::OkStatus();
}

ParameterServerClient::ShardCall ParameterServerClient::PullCall(
    int shard, int lane, const internal::PullLane& plan, const PullOptions& options,
    std::vector<std::vector<internal::OutgoingRequest>>& exchange) const {
  internal::OutgoingRequest& request = exchange.front().emplace_back();
  request.answer_bytes = plan.bytes;
  PullRequest* pull = request.message.mutable_pull();
  *pull = plan.request;
  pull->set_job_id(options_.job_id);
  pull->set_generation(options_.generation);
  if (options_.parameter_dtype != DATA_TYPE_FLOAT32) {
    pull->set_dense_dtype(options_.parameter_dtype);
  }
  ShardCall call;
  const int64_t min_version = MinVersion(options, shard);
  if (min_version > 0) {
    pull->set_min_version(min_version);
    pull->set_wait_ms(absl::ToInt64Milliseconds(options.wait));
    call.extra = options.wait;
  }
  call.shard = shard;
  call.first_lane = lane;
  call.exchanges = &exchange;
  call.what = absl::StrCat(ShardName(shard), " (pull)");
  call.retry_reason = "pull_unavailable";
  return call;
}

absl::Status ParameterServerClient::PullFailure(int shard, const PullOptions& options,
                                                const absl::Status& failure) const {
  const int64_t min_version = MinVersion(options, shard);
  if (absl::IsDeadlineExceeded(failure) && min_version > 0) {
    return absl::DeadlineExceededError(absl::StrCat("waiting for ", ShardName(shard),
                                                    " to reach version ", min_version, ": ",
                                                    failure.message()));
  }
  return Prefixed(ShardName(shard), failure);
}

absl::Status ParameterServerClient::ReadLaneAnswer(
    int shard, const internal::PullLane& lane,
    const std::vector<internal::IncomingAnswer>& responses, PulledParameters* out, int64_t* version,
    int64_t* bytes) const {
  const std::string from_shard = absl::StrCat(ShardName(shard), " answered a pull with ");
  LaneReceipt receipt;
  int64_t oldest = -1;
  for (const internal::IncomingAnswer& answer : responses) {
    const PushPullResponse& response = answer.message();
    if (response.has_error()) {
      // A refused pull keeps its code (DeadlineExceeded for a version not
      // reached, NotFound, FailedPrecondition, InvalidArgument).
      const absl::Status refused = FromStatusProto(response.error());
      return IsRetryableRefusal(refused, options_.replicated) ? AsUnavailable(refused) : refused;
    }
    if (!response.has_pull()) {
      return WithPrefix(Misfit("a message that is not a pull answer"), from_shard);
    }
    const PullResponse& pull = response.pull();
    oldest = oldest < 0 ? pull.version() : std::min(oldest, pull.version());
    for (int v = 0; v < pull.values_size(); ++v) {
      absl::Status read = absl::OkStatus();
      if (pull.values(v).has_dense()) {
        read = ReadDenseValue(lane, answer, v, out, &receipt);
      } else if (pull.values(v).has_rows()) {
        read = ReadRowsValue(lane, answer, v, out, &receipt);
      }
      if (!read.ok()) return WithPrefix(read, from_shard);
    }
    if (pull.end_of_pull()) {
      if (absl::Status whole = CheckLaneComplete(lane, receipt); !whole.ok()) {
        return WithPrefix(whole, from_shard);
      }
      *version = oldest;
      *bytes = receipt.bytes;
      return absl::OkStatus();
    }
  }
  return absl::UnavailableError(ShardName(shard) + " ended the pull stream early");
}

// ---------------------------------------------------------------- push --

absl::StatusOr<PushSummary> ParameterServerClient::Push(const Gradients& gradients,
                                                        absl::Span<const int64_t> base_versions,
                                                        int64_t examples,
                                                        const PushOrigin& origin) {
  StartPush(gradients, base_versions, examples, origin);
  return FinishPush();
}

void ParameterServerClient::StartPush(const Gradients& gradients,
                                      absl::Span<const int64_t> base_versions, int64_t examples,
                                      const PushOrigin& origin) {
  CHECK(push_ == nullptr) << "a push is already in flight";
  push_ = std::make_unique<PushInFlight>();
  PushInFlight& push = *push_;
  push.start = clock_.Now();
  push.not_started = PreparePush(gradients, base_versions, examples, origin, push);
  if (push.not_started.ok()) push.attempts = StartCalls(push.calls);
}

absl::StatusOr<PushSummary> ParameterServerClient::FinishPush() {
  CHECK(push_ != nullptr) << "no push in flight";
  const std::unique_ptr<PushInFlight> push = std::move(push_);
  RETURN_IF_ERROR(push->not_started);
  const std::vector<absl::Status> results = FinishCalls(push->calls, push->attempts);
  for (size_t c = 0; c < push->calls.size(); ++c) {
    if (!results[c].ok()) return Prefixed(push->calls[c].what, results[c]);
  }
  Conclude(push->messages, push->base_versions, &push->summary);
  if (metrics_ != nullptr) metrics_->RecordPush(push->summary.bytes, clock_.Now() - push->start);
  return std::move(push->summary);
}

std::vector<int64_t> ParameterServerClient::RoundEndsOfPushInFlight() const {
  CHECK(push_ != nullptr) << "no push in flight";
  std::vector<int64_t> ends(slicer_.num_shards(), 0);
  if (!push_->not_started.ok()) return ends;
  for (int s = 0; s < static_cast<int>(push_->messages.size()); ++s) {
    if (!push_->messages[s].empty()) ends[s] = RoundEnd(push_->base_versions[s]);
  }
  return ends;
}

absl::Status ParameterServerClient::PreparePush(const Gradients& gradients,
                                                absl::Span<const int64_t> base_versions,
                                                int64_t examples, const PushOrigin& origin,
                                                PushInFlight& push) {
  const int num_shards = slicer_.num_shards();
  if (static_cast<int>(base_versions.size()) != num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("a push needs ", num_shards, " base versions, got ", base_versions.size()));
  }
  push.base_versions.assign(base_versions.begin(), base_versions.end());
  PushSummary& summary = push.summary;
  summary.incarnation = options_.incarnation;
  summary.sequence = next_sequence_.fetch_add(1);
  summary.shards.resize(num_shards);
  summary.next_min_versions.assign(num_shards, 0);

  const internal::RowPositions positions = internal::SliceGradientRows(slicer_, gradients);
  push.messages.resize(num_shards);
  PushRequest header = PushHeader(summary.sequence, examples, origin);
  const absl::flat_hash_map<std::string, Tensor>* narrowed = nullptr;
  if (options_.gradient_dtype == DATA_TYPE_BFLOAT16) {
    ASSIGN_OR_RETURN(narrowed, narrowed_.Narrow(gradients));
  }
  for (int s = 0; s < num_shards; ++s) {
    if (!slicer_.involves(s)) continue;
    header.set_base_version(std::max<int64_t>(0, base_versions[s]));
    int64_t bytes = 0;
    ASSIGN_OR_RETURN(push.messages[s],
                     internal::BuildShardPush(
                         slicer_, s, gradients, positions, header, options_.streams_per_shard,
                         options_.parallel_min_bytes, options_.chunk_bytes, &bytes, narrowed));
    summary.bytes += bytes;
  }

  // Pushes start on the last lane, pulls on the first: when async training
  // overlaps a push with the next pull, each has a stream of its own.
  for (int s = 0; s < num_shards; ++s) {
    if (push.messages[s].empty()) continue;
    ShardCall& call = push.calls.emplace_back();
    call.shard = s;
    call.first_lane = options_.streams_per_shard - 1;
    call.exchanges = &push.messages[s];
    call.what = absl::StrCat(ShardName(s), " (push ", summary.sequence, ")");
    call.retry_reason = "push_unavailable";
    // Every attempt sends the whole push with the same id: the shard drops
    // a push whose stream broke before it was complete, and answers a
    // retry of a decided one with its first outcome.
    call.read = [this, &summary, s](auto& answers) -> absl::Status {
      ASSIGN_OR_RETURN(summary.shards[s], ReadPushAnswers(answers));
      return absl::OkStatus();
    };
  }
  return absl::OkStatus();
}

PushRequest ParameterServerClient::PushHeader(uint64_t sequence, int64_t examples,
                                              const PushOrigin& origin) const {
  PushRequest header;
  header.set_job_id(options_.job_id);
  header.set_generation(options_.generation);
  if (options_.membership_deadline) {
    header.set_valid_until_unix_ms(absl::ToUnixMillis(options_.membership_deadline()));
  }
  header.mutable_id()->set_worker(options_.worker);
  header.mutable_id()->set_incarnation(options_.incarnation);
  header.mutable_id()->set_sequence(sequence);
  header.set_examples(examples);
  if (origin.lease_id() != 0) *header.mutable_origin() = origin;
  return header;
}

void ParameterServerClient::Conclude(
    const std::vector<std::vector<std::vector<internal::OutgoingRequest>>>& messages,
    absl::Span<const int64_t> base_versions, PushSummary* summary) const {
  int reference = -1;
  for (int s = 0; s < static_cast<int>(messages.size()); ++s) {
    if (messages[s].empty()) continue;
    if (reference < 0) reference = s;
    summary->version = std::max(summary->version, summary->shards[s].version);
    const PushOutcome outcome = summary->shards[s].outcome;
    if (outcome == PUSH_OUTCOME_STALE) summary->stale = true;
    if (options_.update_mode == UPDATE_MODE_SYNC && outcome != PUSH_OUTCOME_STALE) {
      // The round this push joined ends with the version after its base.
      summary->next_min_versions[s] = RoundEnd(base_versions[s]);
    }
  }
  if (reference >= 0 && !summary->stale) {
    const PushOutcome outcome = summary->shards[reference].outcome;
    summary->applied =
        outcome == PUSH_OUTCOME_APPLIED ||
        (outcome == PUSH_OUTCOME_DUPLICATE && options_.update_mode != UPDATE_MODE_SYNC);
  }
}

bool ParameterServerClient::AttemptOutlived(const absl::Status& refused) const {
  // The attempt waited at a shard that stalled (frozen, or failing over)
  // past the deadline it carried; the worker's heartbeats went on, so the
  // coordinator has not handed its data to anyone: the next attempt carries
  // the deadline of now. Once the membership has lapsed it is refused again.
  return ReasonOf(refused) == ERROR_REASON_MEMBERSHIP_LAPSED && options_.membership_deadline &&
         options_.membership_deadline() > absl::Now();
}

absl::StatusOr<ShardPushOutcome> ParameterServerClient::ReadPushAnswers(
    std::vector<absl::StatusOr<std::vector<internal::IncomingAnswer>>>& answers) const {
  // A part that did not get through fails the whole push on the shard (its
  // other parts answer REJECTED/Aborted): retry it all.
  for (const auto& answer : answers) {
    if (absl::IsUnavailable(answer.status())) return answer.status();
  }
  std::optional<ShardPushOutcome> decided;
  for (const auto& answer : answers) {
    if (!answer.ok()) return answer.status();
    for (const internal::IncomingAnswer& incoming : *answer) {
      const PushPullResponse& response = incoming.message();
      if (!response.has_push()) {
        return absl::InternalError("a push was answered with something else");
      }
      const PushResult& r = response.push();
      if (r.outcome() == PUSH_OUTCOME_PART_RECEIVED) continue;
      if (r.outcome() == PUSH_OUTCOME_REJECTED) {
        absl::Status refused = FromStatusProto(r.status());
        if (IsRetryableRefusal(refused, options_.replicated) || AttemptOutlived(refused)) {
          return AsUnavailable(refused);
        }
        if (refused.ok()) refused = absl::UnknownError("refused without a reason");
        return refused;
      }
      if (!decided.has_value()) decided = ShardPushOutcome{r.outcome(), r.version()};
    }
  }
  if (!decided.has_value()) {
    return absl::UnavailableError("no part of the push was answered with its outcome");
  }
  return *decided;
}

}  // namespace worker
}  // namespace pstrain
