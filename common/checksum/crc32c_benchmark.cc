// Throughput of Crc32c on buffers of checkpoint-file sizes:
//   bazel run -c opt //common/checksum:crc32c_benchmark

#include <string>

#include "benchmark/benchmark.h"
#include "common/checksum/crc32c.h"
#include "common/checksum/internal/crc32c_internal.h"

namespace pstrain {
namespace {

void BM_Crc32c(benchmark::State& state) {
  const std::string data(state.range(0), 'x');
  for (auto _ : state) benchmark::DoNotOptimize(Crc32c(data));
  state.SetBytesProcessed(state.iterations() * data.size());
}
BENCHMARK(BM_Crc32c)->Range(64, 4 << 20);

void BM_Crc32cPortable(benchmark::State& state) {
  const std::string data(state.range(0), 'x');
  for (auto _ : state) {
    benchmark::DoNotOptimize(crc32c_internal::ExtendPortable(0, data.data(), data.size()));
  }
  state.SetBytesProcessed(state.iterations() * data.size());
}
BENCHMARK(BM_Crc32cPortable)->Range(64, 4 << 20);

}  // namespace
}  // namespace pstrain
