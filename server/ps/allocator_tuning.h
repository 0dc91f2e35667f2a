#ifndef PSTRAIN_SERVER_PS_ALLOCATOR_TUNING_H_
#define PSTRAIN_SERVER_PS_ALLOCATOR_TUNING_H_

namespace pstrain {

// Keeps glibc malloc from returning memory to the kernel between messages.
// A shard allocates and frees megabyte buffers for every chunk it receives
// or sends; with glibc's defaults many of them are mmap'd and unmapped each
// time (or trimmed from the heap), and the page faults that follow cost
// about a tenth of the CPU of a push+pull. Call once at the start of main,
// before other threads start.
void TuneAllocatorForLargeMessages();

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_ALLOCATOR_TUNING_H_
