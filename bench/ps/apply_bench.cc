// Apply rate of the server-side optimizers on a 64 MB dense variable, beside
// memcpy of the same 64 MB measured in the same run.
//
//   bazel run -c opt //bench/ps:apply_bench -- [--model_mb=64] [--repeats=15]
//       [--report=FILE]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/ps/loopback_reference.h"
#include "bench/report/markdown_report.h"
#include "common/clock/clock.h"
#include "common/optimizer/initializer.h"
#include "common/optimizer/optimizer.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "prometheus/registry.h"
#include "server/ps/dense_variable.h"
#include "server/ps/parameter_shard.h"

DEFINE_string(model_mb, "1,64",
              "variable sizes in MB (2^20 bytes), comma-separated: 1 MB stays in cache (the "
              "Fashion-MNIST MLP is 0.94 MB), 64 MB streams through memory");
DEFINE_int32(repeats, 15, "applies per optimizer; the median is reported");
DEFINE_string(report, "", "write this run's section of bench/RESULTS.md here");

namespace pstrain {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
double MedianSeconds(int repeats, Fn fn) {
  std::vector<double> times;
  fn();  // warm-up: first touch of slots and gradient
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return Median(times);
}

// Prints one update's figures and returns them as a row of the report;
// `bytes_per_param` counts the gradient read plus the value and every slot
// read and written.
std::vector<std::string> Report(const std::string& size, const std::string& what, int64_t n,
                                double seconds, double memcpy_params_per_second,
                                int bytes_per_param) {
  const double rate = static_cast<double>(n) / seconds;
  std::printf("%-34s %8.2f G params/s  %6.2f ms  ratio to memcpy %.2f  (%.1f GB/s of traffic)\n",
              what.c_str(), rate / 1e9, seconds * 1e3, rate / memcpy_params_per_second,
              rate * bytes_per_param / 1e9);
  return {size,
          what,
          absl::StrFormat("%.2f", rate / 1e9),
          absl::StrFormat("%.3f", seconds * 1e3),
          absl::StrFormat("%.2f", rate / memcpy_params_per_second),
          absl::StrFormat("%.1f", rate * bytes_per_param / 1e9)};
}

// Applies every update rule to a variable of `mb` MB, beside memcpy of the
// same bytes; appends a row per rule and returns SGD's params per second.
double MeasureSize(int mb, std::vector<std::vector<std::string>>* rows) {
  const int64_t bytes = static_cast<int64_t>(mb) << 20;
  const int64_t n = bytes / 4;
  const double memcpy_bps = MemcpyBytesPerSecond(bytes, FLAGS_repeats);
  // memcpy of the parameters: 4 bytes read and 4 written per parameter.
  const double memcpy_params = memcpy_bps / 4;
  std::printf("reference: memcpy of %d MB: %.2f GB/s = %.2f G params/s\n", mb, memcpy_bps / 1e9,
              memcpy_params / 1e9);
  const std::string size = absl::StrCat(mb, " MB");
  rows->push_back({size, "memcpy (reference)", absl::StrFormat("%.2f", memcpy_params / 1e9),
                   absl::StrFormat("%.3f", bytes / memcpy_bps * 1e3), "1.00",
                   absl::StrFormat("%.1f", memcpy_bps * 2 / 1e9)});

  std::vector<float> grad(n, 0.001f);
  double sgd_rate = 0;
  const int64_t shape[] = {n};
  for (const char* name : {"sgd", "momentum", "adagrad", "adam", "ftrl"}) {
    OptimizerSpec spec;
    const std::string s = name;
    if (s == "sgd") spec.mutable_sgd();
    if (s == "momentum") spec.mutable_momentum();
    if (s == "adagrad") spec.mutable_adagrad();
    if (s == "adam") spec.mutable_adam();
    if (s == "ftrl") spec.mutable_ftrl();
    auto optimizer = Optimizer::Create(spec).value();
    InitializerSpec init;
    DenseVariable v("w", {n}, Initializer(init, 0, "w", shape), *optimizer);
    int64_t t = 0;
    const double seconds = MedianSeconds(FLAGS_repeats, [&] {
      v.Apply(*optimizer, UpdateStep{0.01f, ++t, 1.0f}, grad.data());
    });
    // Bytes touched per parameter: gradient read, value and slots read and written.
    rows->push_back(
        Report(size, name, n, seconds, memcpy_params, 4 + 8 * (1 + optimizer->num_slots())));
    if (s == "sgd") sgd_rate = static_cast<double>(n) / seconds;
  }

  // The whole shard path of one async push: validation, version, dedup, apply.
  RealClock clock;
  prometheus::Registry registry;
  ShardMetrics metrics(registry);
  for (const char* name : {"sgd", "adam"}) {
    CreateVariablesRequest r;
    r.set_job_id("bench");
    r.set_num_shards(1);
    r.set_num_workers(1);
    if (std::string(name) == "adam") r.mutable_optimizer()->mutable_adam();
    VariableSpec* v = r.add_variables();
    v->set_name("w");
    v->set_kind(VARIABLE_KIND_DENSE);
    v->set_dtype(DATA_TYPE_FLOAT32);
    v->mutable_shape()->add_dims(n);
    auto shard = ParameterShard::Create(r, ShardOptions(), clock, metrics).value();
    uint64_t seq = 0;
    const double seconds = MedianSeconds(FLAGS_repeats, [&] {
      ++seq;
      const PushReply reply = shard->Push({0, 1, seq}, static_cast<int64_t>(seq - 1),
                                          {GradientRef{0, false, {}, grad}});
      CHECK_EQ(reply.outcome, PUSH_OUTCOME_APPLIED);
    });
    rows->push_back(Report(size, std::string("`ParameterShard::Push`, ") + name, n, seconds,
                           memcpy_params, std::string(name) == "sgd" ? 12 : 28));
  }
  return sgd_rate;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  using namespace pstrain;
  std::vector<int> sizes;
  for (absl::string_view size : absl::StrSplit(FLAGS_model_mb, ',')) {
    int mb = 0;
    if (!absl::SimpleAtoi(size, &mb) || mb < 1) {
      std::fprintf(stderr, "apply_bench: --model_mb wants sizes in MB >= 1, like 1,64; got '%s'\n",
                   FLAGS_model_mb.c_str());
      return 2;
    }
    sizes.push_back(mb);
  }
  bench::MarkdownReport report("Optimizer apply rate on a dense variable");
  std::vector<std::vector<std::string>> rows;
  double largest_sgd_rate = 0;
  for (int mb : sizes) largest_sgd_rate = MeasureSize(mb, &rows);

  report.Paragraph(absl::StrFormat(
      "One shard's optimizer updating a float32 variable in place on one thread, the median of "
      "%d applies after a warm-up, beside memcpy of the same bytes in the same run (its G "
      "params/s: 4 bytes read and 4 written per parameter). Traffic counts the gradient read "
      "plus the value and every slot read and written. `ParameterShard::Push` is the whole path "
      "of an async push on the shard: validation, dedup, version, apply. Adam and Adagrad run "
      "AVX kernels where the CPU has AVX (`common/optimizer/internal`).",
      FLAGS_repeats));
  report.Command(absl::StrFormat("bazel-bin/bench/ps/apply_bench --model_mb=%s --repeats=%d",
                                 FLAGS_model_mb, FLAGS_repeats));
  report.Table(
      {"size", "update", "G params/s", "ms per apply", "ratio to memcpy", "GB/s of traffic"}, rows);
  report.Target(absl::StrCat("SGD applies at least 1 G params/s (", sizes.back(), " MB)"),
                largest_sgd_rate >= 1e9,
                absl::StrFormat("%.2f G params/s", largest_sgd_rate / 1e9));
  const absl::Status written = report.WriteTo(FLAGS_report);
  if (!written.ok()) {
    std::fprintf(stderr, "apply_bench: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  return 0;
}
