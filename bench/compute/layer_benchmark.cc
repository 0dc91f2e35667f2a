// Throughput of the MLP's and the CNN's layers at batch 128, in GFLOP/s and
// as a share of this core's FMA peak, measured at start-up in the same run
// with the widest vector instructions oneDNN runs here. A share above 100%
// means the peak is no reference: the benchmark then fails.
//
//   bazel run -c opt //bench/compute:layer_benchmark [-- --report=FILE]
//
// --report=FILE writes the figures as this benchmark's section of
// bench/RESULTS.md; Google Benchmark's own flags work as usual.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/compute/copy_peak.h"
#include "bench/compute/fma_peak.h"
#include "bench/report/markdown_report.h"
#include "benchmark/benchmark.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/layers/activation_layer.h"
#include "common/model/layers/convolution.h"
#include "common/model/layers/inner_product.h"
#include "common/model/layers/pooling.h"
#include "glog/logging.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {
namespace {

// Benchmarks abort on a layer error rather than time a failure.
#define MUST_SUCCEED(expr)                     \
  do {                                         \
    const absl::Status status_ = (expr);       \
    CHECK(status_.ok()) << status_.ToString(); \
  } while (false)

constexpr int64_t kBatch = 128;
FmaPeak fma_peak;

// oneDNN's kernels on this machine, by name, and the widest FMA they use.
struct OneDnnIsa {
  const char* name;
  FmaWidth width;
};

OneDnnIsa EffectiveOneDnnIsa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx:
      return {"avx512_core_amx", FmaWidth::kAvx512};
    case dnnl::cpu_isa::avx512_core_bf16:
      return {"avx512_core_bf16", FmaWidth::kAvx512};
    case dnnl::cpu_isa::avx512_core_vnni:
      return {"avx512_core_vnni", FmaWidth::kAvx512};
    case dnnl::cpu_isa::avx512_core:
      return {"avx512_core", FmaWidth::kAvx512};
    case dnnl::cpu_isa::avx512_mic:
    case dnnl::cpu_isa::avx512_mic_4ops:
      return {"avx512_mic", FmaWidth::kAvx512};
    case dnnl::cpu_isa::avx2_vnni:
      return {"avx2_vnni", FmaWidth::kAvx2};
    case dnnl::cpu_isa::avx2:
      return {"avx2", FmaWidth::kAvx2};
    default:
      return {"older than avx2", FmaWidth::kNone};
  }
}

// The main thread's compute context, created by main() before any benchmark
// runs (benchmarks run on the main thread).
ComputeContext* compute_context = nullptr;

ComputeContext* Context() { return compute_context; }

std::vector<float> Filled(int64_t n, float value) { return std::vector<float>(n, value); }

void SetFlops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOPS"] =
      benchmark::Counter(flops_per_iteration / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (fma_peak.gflops > 0) {
    state.counters["pct_peak"] =
        benchmark::Counter(flops_per_iteration / 1e9 / fma_peak.gflops * 100,
                           benchmark::Counter::kIsIterationInvariantRate);
  }
}

void BM_FmaPeak(benchmark::State& state) {
  for (auto _ : state) state.counters["GFLOPS"] = MeasureFmaPeak(fma_peak.width, 0.2).gflops;
}
BENCHMARK(BM_FmaPeak)->Iterations(3)->Unit(benchmark::kMillisecond);

// args: input, output
void BM_InnerProductForward(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1);
  InnerProduct layer(Context(), in, out);
  auto x = Filled(kBatch * in, 0.5f), w = Filled(in * out, 0.01f), b = Filled(out, 0);
  std::vector<float> y(kBatch * out);
  for (auto _ : state) MUST_SUCCEED(layer.Forward(kBatch, x.data(), w.data(), b.data(), y.data()));
  SetFlops(state, layer.ForwardFlops(kBatch));
}

void BM_InnerProductBackward(benchmark::State& state) {
  const int64_t in = state.range(0), out = state.range(1);
  InnerProduct layer(Context(), in, out);
  auto x = Filled(kBatch * in, 0.5f), w = Filled(in * out, 0.01f), dy = Filled(kBatch * out, 0.1f);
  std::vector<float> dx(kBatch * in), dw(in * out), db(out);
  for (auto _ : state) {
    MUST_SUCCEED(
        layer.Backward(kBatch, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data()));
  }
  SetFlops(state, 2 * layer.ForwardFlops(kBatch));  // data and weight gradients
}

// The MLP 784-256-128-10 and the CNN's dense layers 3136-128-10.
#define INNER_PRODUCT_SHAPES Args({784, 256})->Args({256, 128})->Args({128, 10})->Args({3136, 128})
BENCHMARK(BM_InnerProductForward)->INNER_PRODUCT_SHAPES;
BENCHMARK(BM_InnerProductBackward)->INNER_PRODUCT_SHAPES;

// args: height (= width), in channels, out channels; kernel 5, "same".
void BM_ConvolutionForward(benchmark::State& state) {
  const int64_t hw = state.range(0);
  ConvolutionConfig config;
  config.in_channels = state.range(1);
  config.out_channels = state.range(2);
  config.kernel = 5;
  Convolution layer(Context(), config);
  auto x = Filled(kBatch * hw * hw * config.in_channels, 0.5f);
  auto w = Filled(25 * config.in_channels * config.out_channels, 0.01f);
  auto b = Filled(config.out_channels, 0);
  std::vector<float> y(kBatch * hw * hw * config.out_channels);
  for (auto _ : state) {
    MUST_SUCCEED(layer.Forward(kBatch, hw, hw, x.data(), w.data(), b.data(), y.data()));
  }
  state.SetLabel(layer.Implementation(kBatch, hw, hw));
  SetFlops(state, layer.ForwardFlops(kBatch, hw, hw));
}

void BM_ConvolutionBackward(benchmark::State& state) {
  const int64_t hw = state.range(0);
  ConvolutionConfig config;
  config.in_channels = state.range(1);
  config.out_channels = state.range(2);
  config.kernel = 5;
  Convolution layer(Context(), config);
  auto x = Filled(kBatch * hw * hw * config.in_channels, 0.5f);
  auto w = Filled(25 * config.in_channels * config.out_channels, 0.01f);
  auto dy = Filled(kBatch * hw * hw * config.out_channels, 0.1f);
  std::vector<float> dx(x.size()), dw(w.size()), db(config.out_channels);
  // The first layer needs no data gradient; the CNN skips it too.
  const bool first = config.in_channels == 1;
  for (auto _ : state) {
    MUST_SUCCEED(layer.Backward(kBatch, hw, hw, x.data(), w.data(), dy.data(),
                                first ? nullptr : dx.data(), dw.data(), db.data()));
  }
  state.SetLabel(layer.Implementation(kBatch, hw, hw));
  SetFlops(state, (first ? 1 : 2) * layer.ForwardFlops(kBatch, hw, hw));
}

// conv1: 28x28x1 -> 32; conv2: 14x14x32 -> 64.
BENCHMARK(BM_ConvolutionForward)
    ->Args({28, 1, 32})
    ->Args({14, 32, 64})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ConvolutionBackward)
    ->Args({28, 1, 32})
    ->Args({14, 32, 64})
    ->Unit(benchmark::kMicrosecond);

// A memory-bound layer's distinct floats touched per call: its copy
// reference copies between buffers as large in all, so that both find the
// same share of their bytes in cache. A layer that reads a buffer twice
// (ReLU's backward rereads x) counts both reads in its traffic, and a
// reference sized by traffic rather than by this would spill further out
// of cache than the layer does, and run slower than the layer can.
void SetWorkingSet(benchmark::State& state, size_t floats) {
  state.counters["working_set_bytes"] = static_cast<double>(floats * sizeof(float));
}

// args: height (= width), channels. Memory-bound: no FLOP count.
void BM_MaxPoolForwardBackward(benchmark::State& state) {
  const int64_t hw = state.range(0), c = state.range(1);
  Pooling layer(Context(), PoolingKind::kMax, 2, 2);
  auto x = Filled(kBatch * hw * hw * c, 0.5f);
  std::vector<float> y(kBatch * (hw / 2) * (hw / 2) * c), dx(x.size());
  for (auto _ : state) {
    MUST_SUCCEED(layer.Forward(kBatch, hw, hw, c, x.data(), y.data()));
    MUST_SUCCEED(layer.Backward(kBatch, hw, hw, c, y.data(), dx.data()));
  }
  state.SetBytesProcessed(state.iterations() * (2 * x.size() + 2 * y.size()) * sizeof(float));
  SetWorkingSet(state, x.size() + y.size() + dx.size());
  state.SetLabel(layer.Implementation(kBatch, hw, hw, c));
}
BENCHMARK(BM_MaxPoolForwardBackward)->Args({28, 32})->Args({14, 64});

void BM_MaxPoolForward(benchmark::State& state) {
  const int64_t hw = state.range(0), c = state.range(1);
  Pooling layer(Context(), PoolingKind::kMax, 2, 2);
  auto x = Filled(kBatch * hw * hw * c, 0.5f);
  std::vector<float> y(kBatch * (hw / 2) * (hw / 2) * c);
  for (auto _ : state) MUST_SUCCEED(layer.Forward(kBatch, hw, hw, c, x.data(), y.data()));
  state.SetBytesProcessed(state.iterations() * (x.size() + y.size()) * sizeof(float));
  SetWorkingSet(state, x.size() + y.size());
}
BENCHMARK(BM_MaxPoolForward)->Args({28, 32})->Args({14, 64});

void BM_ReluForwardBackward(benchmark::State& state) {
  const int64_t n = state.range(0);
  ActivationLayer layer(Context(), ActivationKind::kRelu);
  auto x = Filled(n, 0.5f);
  std::vector<float> y(n), dx(n);
  for (auto _ : state) {
    MUST_SUCCEED(layer.Forward(n, x.data(), y.data()));
    MUST_SUCCEED(layer.Backward(n, x.data(), y.data(), dx.data()));
  }
  // Forward reads x and writes y; backward reads x and y, writes dx.
  state.SetBytesProcessed(state.iterations() * 5 * n * sizeof(float));
  SetWorkingSet(state, x.size() + y.size() + dx.size());
}
BENCHMARK(BM_ReluForwardBackward)->Arg(kBatch * 256)->Arg(kBatch * 28 * 28 * 32);

// The fastest copy's bytes read and written per second at the working set
// of the layer it is compared with (in cache or not), the best of many.
double CopyTrafficPerSecond(double working_set) {
  const int64_t bytes = std::max<int64_t>(static_cast<int64_t>(working_set), 8192);
  const int repeats = static_cast<int>(std::clamp<int64_t>((int64_t{512} << 20) / bytes, 20, 4000));
  return CopyPeakBytesPerSecond(bytes, repeats);
}

// Prints as the console reporter does and keeps each run as a row of the
// report: CPU time per iteration, GFLOP/s and share of the FMA peak, or
// GB/s and share of the copy peak's for the memory-bound layers.
class ReportCollector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    benchmark::ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_name.function_name == "BM_FmaPeak") continue;
      const auto counter = [&](const char* name) {
        auto it = run.counters.find(name);
        return it == run.counters.end() ? 0.0 : it->second.value;
      };
      const double cpu_us = run.cpu_accumulated_time / run.iterations * 1e6;
      std::string rate;
      std::string share;
      if (counter("bytes_per_second") > 0) {
        // Without it the reference would be a copy in L1, which no layer
        // can come near: the share could never fail.
        CHECK_GT(counter("working_set_bytes"), 0)
            << run.benchmark_name() << " counts bytes but sets no working set (SetWorkingSet)";
        // Against the fastest copy over a working set as large, in the same run: a
        // memory-bound layer cannot read and write its bytes faster.
        const double pct =
            counter("bytes_per_second") / CopyTrafficPerSecond(counter("working_set_bytes")) * 100;
        rate = absl::StrFormat("%.1f GB/s", counter("bytes_per_second") / 1e9);
        share = absl::StrFormat("%.1f%% of the copy peak", pct);
        highest_pct_ = std::max(highest_pct_, pct);
      }
      if (counter("GFLOPS") > 0) {
        rate = absl::StrFormat("%.1f GFLOP/s", counter("GFLOPS"));
        share = absl::StrFormat("%.1f%%", counter("pct_peak"));
        highest_pct_ = std::max(highest_pct_, counter("pct_peak"));
        if (absl::StartsWith(run.run_name.function_name, "BM_InnerProduct") &&
            (absl::StrContains(run.run_name.args, "784/256") ||
             absl::StrContains(run.run_name.args, "3136/128"))) {
          lowest_large_inner_product_pct_ =
              std::min(lowest_large_inner_product_pct_, counter("pct_peak"));
        }
      }
      rows_.push_back({absl::StrCat("`", run.benchmark_name(), "`"), run.report_label,
                       absl::StrFormat("%.1f", cpu_us), rate, share});
    }
  }

  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  double lowest_large_inner_product_pct() const { return lowest_large_inner_product_pct_; }
  double highest_pct() const { return highest_pct_; }

 private:
  std::vector<std::vector<std::string>> rows_;
  double lowest_large_inner_product_pct_ = std::numeric_limits<double>::infinity();
  double highest_pct_ = 0;
};

// Takes --report=FILE out of the arguments before Google Benchmark sees them.
std::string TakeReportFlag(int* argc, char** argv) {
  std::string path;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--report=", 9) == 0) {
      path = argv[i] + 9;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return path;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  const std::string report_path = pstrain::TakeReportFlag(&argc, argv);
  // Measure the peak on the compute thread as configured for training
  // (denormals flushed, one thread).
  absl::StatusOr<std::unique_ptr<pstrain::ComputeContext>> context =
      pstrain::ComputeContext::Create();
  CHECK(context.ok()) << context.status();
  pstrain::compute_context = context->get();
  const pstrain::OneDnnIsa isa = pstrain::EffectiveOneDnnIsa();
  pstrain::fma_peak = pstrain::MeasureFmaPeak(pstrain::WidestFma(isa.width), 1.0);
  benchmark::AddCustomContext("fma_peak_gflops", absl::StrCat(pstrain::fma_peak.gflops));
  benchmark::AddCustomContext("fma_peak_width", pstrain::FmaWidthName(pstrain::fma_peak.width));
  benchmark::AddCustomContext("onednn_isa", isa.name);
  benchmark::Initialize(&argc, argv);
  pstrain::ReportCollector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  pstrain::bench::MarkdownReport report("Compute core: layers against the FMA peak");
  report.Paragraph(absl::StrFormat(
      "The MLP's and the CNN's layers at batch 128 on one compute thread (oneDNN, denormals "
      "flushed), timed by Google Benchmark: CPU time per call, GFLOP/s per CPU second and their "
      "share of this core's FMA peak, measured first in the same run by an unrolled loop of "
      "independent %s FMA chains, the widest vectors oneDNN runs here (%s): **%.1f GFLOP/s**. "
      "The memory-bound layers' bytes read and written per second are compared with the "
      "fastest copy (glibc's memcpy or a loop of 256-bit loads and stores, the best of many) "
      "between two buffers as large in all as the layer's, measured beside each, so that both "
      "find as much of their data in cache. Inner-product backward counts "
      "the data and weight gradients; the first convolution's backward only the weight "
      "gradient.",
      pstrain::FmaWidthName(pstrain::fma_peak.width), isa.name, pstrain::fma_peak.gflops));
  report.Command("bazel-bin/bench/compute/layer_benchmark");
  report.Table({"layer (batch 128)", "implementation", "CPU µs per call", "rate", "of the peak"},
               collector.rows());
  // Past the peak, the peak is wrong: never report it as a target met.
  const bool reference_holds = collector.highest_pct() <= 100;
  if (!reference_holds) {
    report.Paragraph(absl::StrFormat(
        "**The reference is wrong**: a layer ran at %.1f%% of its measured peak (FMA or copy), "
        "past what the core can do; a peak was not measured as the layer runs.",
        collector.highest_pct()));
  }
  report.Target("the large inner products (784→256, 3136→128) at >= 60% of the FMA peak",
                reference_holds && collector.lowest_large_inner_product_pct() >= 60,
                absl::StrFormat("lowest %.1f%%", collector.lowest_large_inner_product_pct()));
  const absl::Status written = report.WriteTo(report_path);
  if (!written.ok()) {
    std::fprintf(stderr, "layer_benchmark: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  if (!reference_holds) {
    std::fprintf(stderr,
                 "layer_benchmark: a layer ran at %.1f%% of its measured peak (the %s FMA peak or "
                 "the copy peak): that peak is no reference\n",
                 collector.highest_pct(), pstrain::FmaWidthName(pstrain::fma_peak.width));
    return 1;
  }
  return 0;
}
