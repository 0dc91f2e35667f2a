#include "common/metrics/process_collector.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "prometheus/metric_family.h"

namespace pstrain {
namespace {

std::map<std::string, prometheus::MetricFamily> ByName(
    const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, prometheus::MetricFamily> by_name;
  for (const prometheus::MetricFamily& family : families) by_name[family.name] = family;
  return by_name;
}

TEST(ProcessCollectorTest, ReportsTheStandardProcessMetricsOfThisProcess) {
  ProcessCollector collector;
  std::map<std::string, prometheus::MetricFamily> families = ByName(collector.Collect());
  ASSERT_EQ(families.size(), 6u);
  const prometheus::MetricFamily& cpu = families["process_cpu_seconds_total"];
  EXPECT_EQ(cpu.type, prometheus::MetricType::Counter);
  ASSERT_EQ(cpu.metric.size(), 1u);
  EXPECT_GE(cpu.metric[0].counter.value, 0);
  for (const char* gauge :
       {"process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_start_time_seconds", "process_open_fds", "process_max_fds"}) {
    const prometheus::MetricFamily& family = families[gauge];
    EXPECT_EQ(family.type, prometheus::MetricType::Gauge) << gauge;
    EXPECT_FALSE(family.help.empty()) << gauge;
    ASSERT_EQ(family.metric.size(), 1u) << gauge;
    EXPECT_GT(family.metric[0].gauge.value, 0) << gauge;
  }
}

TEST(ProcessCollectorTest, LeavesTheMetricsOutWhenProcCannotBeRead) {
  ProcessCollector collector(::testing::TempDir() + "/no_such_proc");
  EXPECT_TRUE(collector.Collect().empty());
}

}  // namespace
}  // namespace pstrain
