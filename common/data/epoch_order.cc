#include "common/data/epoch_order.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/data/epoch_shuffle.h"
#include "common/random/split_mix.h"

namespace pstrain {
namespace {

// Keys each window's shuffle apart from the block permutation's and from
// the other windows'. Its value picks every streamed epoch's order, which
// checkpoints refer to: it must never change.
constexpr uint64_t kWindowKey = 0x5bd1e9955bd1e995ull;

}  // namespace

EpochOrder::EpochOrder(int64_t num_records, bool shuffle, uint64_t seed, int64_t epoch)
    : num_records_(num_records), shuffle_(shuffle), seed_(seed), epoch_(epoch) {}

std::unique_ptr<EpochOrder> EpochOrder::InMemory(int64_t num_records, bool shuffle, uint64_t seed,
                                                 int64_t epoch) {
  std::unique_ptr<EpochOrder> order(new EpochOrder(num_records, shuffle, seed, epoch));
  if (shuffle) {
    order->records_.resize(static_cast<size_t>(num_records));
    FillEpochOrder(0, RecordOrder::kShuffled, seed, epoch, absl::MakeSpan(order->records_));
  }
  return order;
}

std::unique_ptr<EpochOrder> EpochOrder::Blocked(const BlockLayout& layout, bool shuffle,
                                                uint64_t seed, int64_t epoch) {
  std::unique_ptr<EpochOrder> order(new EpochOrder(layout.num_records(), shuffle, seed, epoch));
  if (!shuffle) return order;
  order->layout_ = layout;
  // The full blocks first, then the short ones (a file's last): so every
  // window but the last few spans window_blocks full blocks, and windows
  // start at multiples of their size, where leases of that many records
  // can start too (a lease that covers part of a window decodes every
  // block of it).
  int64_t full_size = 0;
  for (int64_t block = 0; block < layout.num_blocks(); ++block) {
    full_size = std::max(full_size, layout.block_ends[block] - layout.block_begin(block));
  }
  std::vector<int64_t> short_blocks;
  for (int64_t block = 0; block < layout.num_blocks(); ++block) {
    const bool full = layout.block_ends[block] - layout.block_begin(block) == full_size;
    (full ? order->blocks_ : short_blocks).push_back(block);
  }
  ShuffleForEpoch(seed, epoch, absl::MakeSpan(order->blocks_));
  ShuffleForEpoch(seed ^ kWindowKey, epoch, absl::MakeSpan(short_blocks));
  order->blocks_.insert(order->blocks_.end(), short_blocks.begin(), short_blocks.end());
  const int64_t window_blocks = std::max<int64_t>(1, layout.window_blocks);
  order->window_starts_.push_back(0);
  int64_t position = 0;
  for (int64_t slot = 0; slot < layout.num_blocks(); ++slot) {
    const int64_t block = order->blocks_[slot];
    position += layout.block_ends[block] - layout.block_begin(block);
    if ((slot + 1) % window_blocks == 0 || slot + 1 == layout.num_blocks()) {
      order->window_starts_.push_back(position);
    }
  }
  return order;
}

std::shared_ptr<const EpochOrder::Window> EpochOrder::WindowRecords(int64_t window) const {
  {
    absl::MutexLock lock(&mu_);
    for (const auto& recent : recent_) {
      if (recent != nullptr && recent->index == window) return recent;
    }
  }
  auto built = std::make_shared<Window>();
  built->index = window;
  const int64_t window_blocks = std::max<int64_t>(1, layout_.window_blocks);
  const int64_t first_slot = window * window_blocks;
  const int64_t end_slot = std::min(first_slot + window_blocks, layout_.num_blocks());
  built->records.reserve(static_cast<size_t>(window_starts_[window + 1] - window_starts_[window]));
  for (int64_t slot = first_slot; slot < end_slot; ++slot) {
    const int64_t block = blocks_[slot];
    for (int64_t record = layout_.block_begin(block); record < layout_.block_ends[block];
         ++record) {
      built->records.push_back(record);
    }
  }
  ShuffleForEpoch(seed_ ^ SplitMix64(kWindowKey + static_cast<uint64_t>(window)), epoch_,
                  absl::MakeSpan(built->records));
  absl::MutexLock lock(&mu_);
  recent_[1] = std::move(recent_[0]);
  recent_[0] = built;
  return built;
}

absl::Status EpochOrder::RecordsAt(absl::Span<const int64_t> positions,
                                   absl::Span<int64_t> records) const {
  std::shared_ptr<const Window> window;
  for (size_t i = 0; i < positions.size(); ++i) {
    const int64_t position = positions[i];
    if (position < 0 || position >= num_records_) {
      return absl::OutOfRangeError(
          absl::StrCat("position ", position, " is outside the ", num_records_, " records"));
    }
    if (!shuffle_) {
      records[i] = position;
    } else if (!records_.empty()) {
      records[i] = records_[position];
    } else {
      if (window == nullptr || position < window_starts_[window->index] ||
          position >= window_starts_[window->index + 1]) {
        const int64_t index =
            std::upper_bound(window_starts_.begin(), window_starts_.end(), position) -
            window_starts_.begin() - 1;
        window = WindowRecords(index);
      }
      records[i] = window->records[position - window_starts_[window->index]];
    }
  }
  return absl::OkStatus();
}

}  // namespace pstrain
