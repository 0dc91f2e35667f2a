#include "common/data/block_layout.h"

#include <algorithm>

namespace pstrain {

int64_t BlockLayout::BlockOf(int64_t record) const {
  return std::upper_bound(block_ends.begin(), block_ends.end(), record) - block_ends.begin();
}

}  // namespace pstrain
