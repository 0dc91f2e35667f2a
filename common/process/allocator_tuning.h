#ifndef PSTRAIN_COMMON_PROCESS_ALLOCATOR_TUNING_H_
#define PSTRAIN_COMMON_PROCESS_ALLOCATOR_TUNING_H_

namespace pstrain {

// Keeps glibc malloc from returning memory to the kernel between steps.
// Every pstrain process allocates and frees buffers of hundreds of
// kilobytes to megabytes per step or message: a shard for every chunk it
// receives or sends, a worker or an evaluator for every batch it fills
// (128 Fashion-MNIST images are 400 KB of floats). With glibc's defaults
// many of them are mmap'd and unmapped each time (or trimmed from the
// heap), and every first touch of a page after that is a fault: about a
// tenth of the CPU of a shard's push+pull, and a quarter of the local
// cluster's training throughput (workers and the evaluator together).
// Called by RunDaemonMain and by the pstrain command, once at the start of
// main, before other threads start.
void TuneAllocatorForLargeBuffers();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PROCESS_ALLOCATOR_TUNING_H_
