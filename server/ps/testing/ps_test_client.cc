#include "server/ps/testing/ps_test_client.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/tensor/bfloat16.h"

namespace pstrain {

PushId MakePushId(int32_t worker, uint64_t incarnation, uint64_t sequence) {
  PushId id;
  id.set_worker(worker);
  id.set_incarnation(incarnation);
  id.set_sequence(sequence);
  return id;
}

std::vector<PushPullRequest> DensePushMessages(const std::string& job, const PushId& id,
                                               int64_t base_version, const std::string& name,
                                               const std::vector<int64_t>& shape,
                                               absl::Span<const float> values, int64_t chunk_bytes,
                                               uint64_t tag, int num_parts, int part) {
  const int64_t total = static_cast<int64_t>(values.size()) * 4;
  const char* bytes = reinterpret_cast<const char*>(values.data());
  std::vector<PushPullRequest> out;
  int64_t index = 0;
  for (int64_t at = 0; at < total || (at == 0 && total == 0); at += chunk_bytes, ++index) {
    if (index % num_parts != part) continue;
    PushPullRequest& m = out.emplace_back();
    m.set_tag(tag);
    PushRequest* p = m.mutable_push();
    p->set_job_id(job);
    *p->mutable_id() = id;
    p->set_base_version(base_version);
    if (num_parts > 1) {
      p->set_num_parts(num_parts);
      p->set_part(part);
    }
    NamedTensor* g = p->add_gradients();
    g->set_name(name);
    DenseTensor* d = g->mutable_dense();
    d->set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t dim : shape) d->mutable_shape()->add_dims(dim);
    const int64_t n = std::min(chunk_bytes, total - at);
    d->set_data(bytes + at, n);
    if (n != total) {
      d->mutable_chunk()->set_offset(at);
      d->mutable_chunk()->set_total_bytes(total);
    }
    if (total == 0) break;
  }
  if (out.empty()) {  // a part with no chunk still ends
    PushPullRequest& m = out.emplace_back();
    m.set_tag(tag);
    m.mutable_push()->set_job_id(job);
    *m.mutable_push()->mutable_id() = id;
    m.mutable_push()->set_base_version(base_version);
    m.mutable_push()->set_num_parts(num_parts);
    m.mutable_push()->set_part(part);
  }
  out.back().mutable_push()->set_end_of_push(true);
  return out;
}

PushPullRequest RowsPushMessage(const std::string& job, const PushId& id, int64_t base_version,
                                const std::string& name, int64_t row_width,
                                absl::Span<const int64_t> ids, absl::Span<const float> values,
                                uint64_t tag) {
  PushPullRequest m;
  m.set_tag(tag);
  PushRequest* p = m.mutable_push();
  p->set_job_id(job);
  *p->mutable_id() = id;
  p->set_base_version(base_version);
  p->set_end_of_push(true);
  NamedTensor* g = p->add_gradients();
  g->set_name(name);
  SparseRows* rows = g->mutable_rows();
  rows->set_dtype(DATA_TYPE_FLOAT32);
  rows->set_row_width(row_width);
  rows->mutable_ids()->Add(ids.begin(), ids.end());
  rows->set_values(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return m;
}

PushPullRequest PullMessage(const std::string& job, const std::vector<std::string>& names,
                            uint64_t tag, int64_t min_version, int64_t wait_ms) {
  PushPullRequest m;
  m.set_tag(tag);
  PullRequest* p = m.mutable_pull();
  p->set_job_id(job);
  for (const std::string& n : names) p->add_names(n);
  p->set_min_version(min_version);
  p->set_wait_ms(wait_ms);
  return m;
}

StreamResult RunStream(ParameterServer::Stub& stub, const std::vector<PushPullRequest>& requests,
                       absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  std::unique_ptr<grpc::ClientReaderWriter<PushPullRequest, PushPullResponse>> stream =
      stub.PushPull(&context);
  StreamResult result;
  std::thread writer([&] {
    for (const PushPullRequest& r : requests) {
      if (!stream->Write(r)) break;
    }
    stream->WritesDone();
  });
  PushPullResponse response;
  while (stream->Read(&response)) result.responses.push_back(response);
  writer.join();
  result.status = stream->Finish();
  return result;
}

std::vector<float> DenseValues(const std::vector<PushPullResponse>& responses,
                               const std::string& name) {
  std::vector<float> out;
  for (const PushPullResponse& r : responses) {
    if (!r.has_pull()) continue;
    for (const NamedTensor& t : r.pull().values()) {
      if (t.name() != name || !t.has_dense()) continue;
      const DenseTensor& d = t.dense();
      const int64_t element_bytes = d.dtype() == DATA_TYPE_BFLOAT16 ? 2 : 4;
      const int64_t total =
          d.has_chunk() ? d.chunk().total_bytes() : static_cast<int64_t>(d.data().size());
      out.resize(total / element_bytes);
      float* to = out.data() + (d.has_chunk() ? d.chunk().offset() : 0) / element_bytes;
      if (element_bytes == 2) {
        WidenBfloat16(d.data().data(), static_cast<int64_t>(d.data().size()) / 2, to);
      } else {
        std::memcpy(to, d.data().data(), d.data().size());
      }
    }
  }
  return out;
}

}  // namespace pstrain
