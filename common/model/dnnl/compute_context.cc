#include "common/model/dnnl/compute_context.h"

#include <omp.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {
namespace {

// MXCSR bits: flush-to-zero (results) and denormals-are-zero (inputs).
constexpr unsigned int kFlushToZero = 0x8000;
constexpr unsigned int kDenormalsAreZero = 0x0040;

}  // namespace

void ConfigureComputeThread(int num_threads, bool flush_denormals) {
  omp_set_num_threads(num_threads);
#if defined(__SSE__)
  if (flush_denormals) _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
#else
  (void)flush_denormals;
#endif
}

bool DenormalsAreFlushed() {
#if defined(__SSE__)
  const unsigned int both = kFlushToZero | kDenormalsAreZero;
  return (_mm_getcsr() & both) == both;
#else
  return false;
#endif
}

absl::StatusOr<std::unique_ptr<ComputeContext>> ComputeContext::Create(
    const ComputeOptions& options) {
  if (options.num_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute threads must be >= 1, got ", options.num_threads));
  }
  ConfigureComputeThread(options.num_threads, options.flush_denormals);
  dnnl::engine engine;
  dnnl::stream stream;
  absl::Status status = CallDnnl("creating the CPU engine", [&] {
    engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream = dnnl::stream(engine);
  });
  if (!status.ok()) return status;
  return std::unique_ptr<ComputeContext>(
      new ComputeContext(options, std::move(engine), std::move(stream)));
}

ComputeContext::ComputeContext(const ComputeOptions& options, dnnl::engine engine,
                               dnnl::stream stream)
    : options_(options), engine_(std::move(engine)), stream_(std::move(stream)) {}

}  // namespace pstrain
