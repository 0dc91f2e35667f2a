#include "common/process/allocator_tuning.h"

#include <malloc.h>

namespace pstrain {

void TuneAllocatorForLargeBuffers() {
  // Below 64 MiB, allocations come from the heap rather than fresh mappings.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  // Free memory stays in the heap up to 1 GiB instead of being trimmed.
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace pstrain
