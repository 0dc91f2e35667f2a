#ifndef PSTRAIN_COMMON_DATA_BLOCK_LAYOUT_H_
#define PSTRAIN_COMMON_DATA_BLOCK_LAYOUT_H_

#include <cstdint>
#include <vector>

namespace pstrain {

// How a streamed source's records fall into blocks, the runs of consecutive
// records it reads from a file at once: block i holds records
// [block_ends[i - 1], block_ends[i]) (block 0 starts at record 0). A
// shuffled epoch permutes the blocks and then the records within each
// window of window_blocks consecutive blocks of that order (epoch_order.h),
// so that reading it decodes each block once while its window is read,
// instead of seeking to a random record each time. A value type.
struct BlockLayout {
  std::vector<int64_t> block_ends;  // increasing; the last is the record count
  int32_t window_blocks = 1;        // >= 1

  int64_t num_records() const { return block_ends.empty() ? 0 : block_ends.back(); }
  int64_t num_blocks() const { return static_cast<int64_t>(block_ends.size()); }
  int64_t block_begin(int64_t block) const { return block == 0 ? 0 : block_ends[block - 1]; }
  // The block that holds `record`, in [0, num_records()).
  int64_t BlockOf(int64_t record) const;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_BLOCK_LAYOUT_H_
