#ifndef PSTRAIN_COMMON_MODEL_DNNL_COMPUTE_CONTEXT_H_
#define PSTRAIN_COMMON_MODEL_DNNL_COMPUTE_CONTEXT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

struct ComputeOptions {
  // OpenMP threads oneDNN may use for one primitive. Default 1: when several
  // processes share a small machine, more threads contend and throughput
  // collapses. Must be >= 1.
  int num_threads = 1;
  // Flush denormal floats to zero (FTZ and DAZ in the MXCSR). Default true:
  // weights and gradients drift into the denormal range late in training and
  // each denormal operation costs a micro-code assist.
  bool flush_denormals = true;
};

// The oneDNN CPU engine and stream of one compute thread. Create it on the
// thread that runs the primitives: Create() configures that thread (thread
// count, denormal flushing). Thread-compatible, not thread-safe: each compute
// thread owns its own.
class ComputeContext {
 public:
  // InvalidArgument: num_threads < 1. Internal: oneDNN has no CPU engine.
  static absl::StatusOr<std::unique_ptr<ComputeContext>> Create(
      const ComputeOptions& options = ComputeOptions());

  ComputeContext(const ComputeContext&) = delete;
  ComputeContext& operator=(const ComputeContext&) = delete;

  const dnnl::engine& engine() const { return engine_; }
  dnnl::stream& stream() { return stream_; }
  const ComputeOptions& options() const { return options_; }

 private:
  ComputeContext(const ComputeOptions& options, dnnl::engine engine, dnnl::stream stream);

  const ComputeOptions options_;
  const dnnl::engine engine_;
  dnnl::stream stream_;
};

// Sets the calling thread's OpenMP thread count and, if `flush_denormals`, the
// FTZ and DAZ bits of its MXCSR. Threads created afterwards by this thread
// inherit the floating-point environment.
void ConfigureComputeThread(int num_threads, bool flush_denormals);

// True if the calling thread flushes denormal results and inputs to zero.
bool DenormalsAreFlushed();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_DNNL_COMPUTE_CONTEXT_H_
