#include "common/model/dnnl/compute_context.h"

#include <omp.h>

#include <thread>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

// Keeps the compiler from folding the denormal arithmetic below.
volatile float sink;

TEST(ComputeContextTest, ConfiguresTheCallingThread) {
  std::thread([] {
    ComputeOptions options;
    options.num_threads = 1;
    auto context = ComputeContext::Create(options);
    ASSERT_TRUE(context.ok()) << context.status();
    EXPECT_EQ(omp_get_max_threads(), 1);
    EXPECT_TRUE(DenormalsAreFlushed());
    // The smallest normal float halved is a denormal; flushed, it is zero.
    volatile float smallest_normal = 1.17549435e-38f;
    sink = smallest_normal * 0.5f;
    EXPECT_EQ(sink, 0.0f);
  }).join();
}

TEST(ComputeContextTest, HonoursThreadCountAndDenormalOption) {
  std::thread([] {
    ComputeOptions options;
    options.num_threads = 2;
    options.flush_denormals = false;
    auto context = ComputeContext::Create(options);
    ASSERT_TRUE(context.ok()) << context.status();
    EXPECT_EQ(omp_get_max_threads(), 2);
    EXPECT_FALSE(DenormalsAreFlushed());
    EXPECT_EQ((*context)->options().num_threads, 2);
  }).join();
}

TEST(ComputeContextTest, RefusesZeroThreads) {
  ComputeOptions options;
  options.num_threads = 0;
  EXPECT_EQ(ComputeContext::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
