#include "worker/internal/incoming_answer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/wire_format_lite.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

using google::protobuf::internal::WireFormatLite;

// Field numbers on the path to a pulled dense value's bytes.
constexpr int kResponsePullField = 3;  // PushPullResponse.pull
constexpr int kValuesField = 2;        // PullResponse.values
constexpr int kDenseField = 2;         // NamedTensor.dense
constexpr int kDataField = 3;          // DenseTensor.data

// Reads protobuf wire format across a list of slices. Positions are
// absolute byte offsets.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>& slices) : slices_(slices) {
    for (const grpc::Slice& s : slices_) size_ += s.size();
    Skip(0);
  }

  size_t position() const { return position_; }
  size_t slice() const { return slice_; }
  size_t offset() const { return offset_; }

  bool ReadByte(uint8_t* out) {
    if (position_ >= size_) return false;
    *out = slices_[slice_].begin()[offset_];
    Skip(1);
    return true;
  }

  bool ReadVarint(uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!ReadByte(&b)) return false;
      *out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  // Moves on `n` bytes; false past the end.
  bool Skip(size_t n) {
    if (n > size_ - position_) return false;
    position_ += n;
    offset_ += n;
    while (slice_ < slices_.size() && offset_ >= slices_[slice_].size()) {
      offset_ -= slices_[slice_].size();
      ++slice_;
    }
    return true;
  }

  // Appends the `n` bytes from the current position to *out and moves on.
  bool Append(size_t n, std::string* out) {
    if (n > size_ - position_) return false;
    size_t left = n;
    size_t slice = slice_, offset = offset_;
    while (left > 0) {
      const size_t take = std::min(left, slices_[slice].size() - offset);
      out->append(reinterpret_cast<const char*>(slices_[slice].begin()) + offset, take);
      left -= take;
      ++slice;
      offset = 0;
    }
    return Skip(n);
  }

  // The raw bytes [from, position()) appended to *out (from >= the start
  // of the current slice list; used for a field just read).
  bool AppendSince(size_t from, const SliceReader& at_from, std::string* out) const {
    SliceReader copy = at_from;
    return copy.Append(position_ - from, out);
  }

 private:
  const std::vector<grpc::Slice>& slices_;
  size_t size_ = 0;
  size_t position_ = 0;
  size_t slice_ = 0;
  size_t offset_ = 0;
};

// One field's key, and for LEN fields its length.
struct Field {
  int number = 0;
  WireFormatLite::WireType type = WireFormatLite::WIRETYPE_VARINT;
  uint64_t length = 0;
};

// Reads a field's key (and a LEN field's length, leaving the reader at its
// payload).
bool ReadKey(SliceReader& r, Field* f) {
  uint64_t key;
  if (!r.ReadVarint(&key) || key > UINT32_MAX) return false;
  f->number = WireFormatLite::GetTagFieldNumber(static_cast<uint32_t>(key));
  f->type = WireFormatLite::GetTagWireType(static_cast<uint32_t>(key));
  if (f->number == 0) return false;
  if (f->type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) return r.ReadVarint(&f->length);
  return true;
}

// Skips a field's payload (the key read).
bool SkipPayload(SliceReader& r, const Field& f) {
  switch (f.type) {
    case WireFormatLite::WIRETYPE_VARINT: {
      uint64_t v;
      return r.ReadVarint(&v);
    }
    case WireFormatLite::WIRETYPE_FIXED64:
      return r.Skip(8);
    case WireFormatLite::WIRETYPE_FIXED32:
      return r.Skip(4);
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
      return r.Skip(f.length);
    default:
      return false;  // groups are not used by these messages
  }
}

// Walks the fields in [r.position(), end): fields for which `special`
// returns true it has consumed itself; every other field's raw bytes are
// appended to *rest, to be parsed by protobuf.
template <typename Special>
bool Walk(SliceReader& r, size_t end, std::string* rest, Special special) {
  while (r.position() < end) {
    const SliceReader start = r;
    const size_t from = r.position();
    Field f;
    if (!ReadKey(r, &f)) return false;
    if (f.type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED && f.length > end - r.position()) {
      return false;
    }
    bool handled = false;
    if (!special(f, &handled)) return false;
    if (!handled) {
      if (!SkipPayload(r, f)) return false;
      if (!r.AppendSince(from, start, rest)) return false;
    }
  }
  return r.position() == end;
}

}  // namespace

absl::StatusOr<IncomingAnswer> IncomingAnswer::Parse(const grpc::ByteBuffer& bytes) {
  IncomingAnswer answer;
  if (!bytes.Dump(&answer.slices_).ok()) {
    return absl::InvalidArgumentError("a PushPullResponse that cannot be read");
  }
  SliceReader r(answer.slices_);
  size_t total = 0;
  for (const grpc::Slice& s : answer.slices_) total += s.size();

  std::string top_rest;
  PullResponse pull;
  bool has_pull = false;
  const bool ok = Walk(r, total, &top_rest, [&](const Field& f, bool* handled) {
    if (f.number != kResponsePullField || f.type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      return true;
    }
    *handled = true;
    has_pull = true;
    std::string pull_rest;
    const size_t pull_end = r.position() + f.length;
    const bool pull_ok = Walk(r, pull_end, &pull_rest, [&](const Field& g, bool* value_handled) {
      if (g.number != kValuesField || g.type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        return true;
      }
      *value_handled = true;
      const int value = pull.values_size();
      NamedTensor* tensor = pull.add_values();
      std::string tensor_rest;
      const size_t tensor_end = r.position() + g.length;
      const bool tensor_ok =
          Walk(r, tensor_end, &tensor_rest, [&](const Field& h, bool* dense_handled) {
            if (h.number != kDenseField || h.type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
              return true;
            }
            *dense_handled = true;
            // Protobuf merges repeated occurrences of a message field; so do
            // we, through the raw bytes of everything but the data.
            std::string dense_rest;
            const size_t dense_end = r.position() + h.length;
            const bool dense_ok =
                Walk(r, dense_end, &dense_rest, [&](const Field& d, bool* data_handled) {
                  if (d.number != kDataField ||
                      d.type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
                    return true;
                  }
                  *data_handled = true;
                  // The last occurrence of a bytes field wins, as in protobuf.
                  Kept kept{value, r.slice(), r.offset(), static_cast<int64_t>(d.length)};
                  if (!answer.kept_.empty() && answer.kept_.back().value == value) {
                    answer.kept_.back() = kept;
                  } else {
                    answer.kept_.push_back(kept);
                  }
                  return r.Skip(d.length);
                });
            if (!dense_ok) return false;
            DenseTensor* dense = tensor->mutable_dense();
            return dense->MergeFromString(dense_rest);
          });
      if (!tensor_ok) return false;
      // Fields of the NamedTensor other than dense. One with both dense
      // and rows (a oneof) is refused rather than resolved by field order.
      const bool had_dense = tensor->has_dense();
      if (!tensor->MergeFromString(tensor_rest)) return false;
      return !had_dense || tensor->has_dense();
    });
    if (!pull_ok) return false;
    return pull.MergeFromString(pull_rest);
  });
  if (!ok || !answer.message_.ParseFromString(top_rest)) {
    return absl::InvalidArgumentError("a PushPullResponse that does not parse");
  }
  if (has_pull) {
    if (answer.message_.kind_case() != PushPullResponse::KIND_NOT_SET) {
      return absl::InvalidArgumentError("a PushPullResponse with a pull answer and another kind");
    }
    *answer.message_.mutable_pull() = std::move(pull);
  }
  return answer;
}

const IncomingAnswer::Kept* IncomingAnswer::FindKept(int value) const {
  for (const Kept& k : kept_) {
    if (k.value == value) return &k;
  }
  return nullptr;
}

absl::Status IncomingAnswer::ReadSharedFrom(std::shared_ptr<const SegmentRegion> region) {
  if (!message_.has_pull()) return absl::OkStatus();
  const auto& values = message_.pull().values();
  for (int v = 0; v < values.size(); ++v) {
    const bool dense = values[v].has_dense() && values[v].dense().has_shared();
    const bool rows = values[v].has_rows() && values[v].rows().has_shared();
    if (!dense && !rows) continue;
    const SharedBytes& at = dense ? values[v].dense().shared() : values[v].rows().shared();
    const char* data = region->Find(at);
    if (data == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("the values of \"", values[v].name(),
                                                     "\" lie outside the exchange's lane region"));
    }
    shared_.push_back({v, data, at.size()});
  }
  region_ = std::move(region);
  return absl::OkStatus();
}

const IncomingAnswer::Shared* IncomingAnswer::FindShared(int value) const {
  for (const Shared& s : shared_) {
    if (s.value == value) return &s;
  }
  return nullptr;
}

absl::string_view IncomingAnswer::RowsValues(int value) const {
  if (const Shared* s = FindShared(value); s != nullptr) {
    return absl::string_view(s->data, static_cast<size_t>(s->size));
  }
  return message_.pull().values(value).rows().values();
}

int64_t IncomingAnswer::DenseDataSize(int value) const {
  if (const Shared* s = FindShared(value); s != nullptr) return s->size;
  if (const Kept* k = FindKept(value); k != nullptr) return k->size;
  return static_cast<int64_t>(message_.pull().values(value).dense().data().size());
}

void IncomingAnswer::CopyDenseData(int value, char* to) const {
  if (const Shared* s = FindShared(value); s != nullptr) {
    std::memcpy(to, s->data, s->size);
    return;
  }
  const Kept* k = FindKept(value);
  if (k == nullptr) {
    const std::string& data = message_.pull().values(value).dense().data();
    std::memcpy(to, data.data(), data.size());
    return;
  }
  int64_t left = k->size;
  size_t slice = k->slice, offset = k->offset;
  while (left > 0) {
    const size_t take = std::min<size_t>(left, slices_[slice].size() - offset);
    std::memcpy(to, slices_[slice].begin() + offset, take);
    to += take;
    left -= static_cast<int64_t>(take);
    ++slice;
    offset = 0;
  }
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
