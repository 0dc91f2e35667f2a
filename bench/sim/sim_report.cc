#include "bench/sim/sim_report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace bench {
namespace {

std::string Ms(absl::Duration d) { return absl::StrFormat("%.2f", absl::ToDoubleMilliseconds(d)); }

std::string PercentilesMs(const LatencySample& sample) {
  if (sample.count() == 0) return "-";
  return absl::StrCat(Ms(sample.Percentile(50)), " / ", Ms(sample.Percentile(99)));
}

std::string MiB(int64_t bytes) {
  return absl::StrFormat("%.1f", static_cast<double>(bytes) / (1 << 20));
}

std::string Ratio(double value, double base) {
  if (base <= 0) return "-";
  return absl::StrFormat("%.2fx", value / base);
}

// "UNAVAILABLE 3, DEADLINE_EXCEEDED 1" over every kind of call.
std::string Refusals(const CoordinatorPoint& point) {
  std::vector<std::string> parts;
  for (int k = 0; k < kSimCallKinds; ++k) {
    for (const auto& [code, count] : point.calls[k].errors) {
      parts.push_back(absl::StrCat(SimCallName(static_cast<SimCall>(k)), " ", code, " ", count));
    }
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

}  // namespace

std::string FirstBreak(const SimRun& run) {
  for (const CoordinatorPoint& point : run.coordinator) {
    if (!point.broke.empty()) return absl::StrCat("At ", point.members, " members: ", point.broke);
  }
  if (run.coordinator.empty()) return "No coordinator point was measured.";
  return absl::StrCat("Nothing broke up to ", run.coordinator.back().members, " members.");
}

void AddSimReport(const SimRun& run, MarkdownReport* out) {
  MarkdownReport& report = *out;
  report.Paragraph(absl::StrFormat(
      "Light workers (bench/sim: no compute, no thread each; gRPC's callback API) register, "
      "heartbeat every %.3g s, take and complete data leases of %d records, report progress "
      "every %d steps, a step every %.3g s, %s, against a real `pstrain-coordinator` and one "
      "real `pstrain-ps` (separate processes). CPU is the coordinator's own (/proc/<pid>/stat) "
      "over the window, per member and second; latencies are from the light workers' side, "
      "call to answer. The simulator's own CPU and how late it ran its members' events say "
      "whether it kept up.",
      run.heartbeat_interval_secs, run.records_per_lease, run.steps_per_report,
      run.step_interval_secs,
      run.member_push_bytes > 0
          ? absl::StrCat("each step pulling and pushing ", run.member_push_bytes / 1024,
                         " KiB on the shard")
          : std::string("the steps leaving the shard alone (it is measured on its own below, "
                        "under closed-loop pushers)")));
  report.Command(run.command);

  report.SubHeading("The coordinator by member count");
  const double base_cpu =
      run.coordinator.empty() ? 0 : run.coordinator.front().CpuMicrosPerMemberSecond();
  MarkdownTable coordinator(
      {"members", "registered / assigned", "coordinator CPU, cores",
       "coordinator CPU, µs per member-s",
       absl::StrCat("vs ", run.coordinator.empty() ? 0 : run.coordinator.front().members),
       "heartbeat p50 / p99 ms", "acquire lease p50 / p99 ms", "complete lease p50 / p99 ms",
       "progress p50 / p99 ms", "heartbeats answered", "coordinator RSS MiB",
       "refusals and failures", "simulator CPU, cores", "simulator late p99 ms / skipped"});
  for (const CoordinatorPoint& point : run.coordinator) {
    coordinator.AddRow(
        {absl::StrCat(point.members), absl::StrCat(point.registered, " / ", point.assigned),
         absl::StrFormat("%.3f", point.seconds > 0 ? point.cpu_seconds / point.seconds : 0),
         absl::StrFormat("%.1f", point.CpuMicrosPerMemberSecond()),
         Ratio(point.CpuMicrosPerMemberSecond(), base_cpu),
         PercentilesMs(point.call(SimCall::kHeartbeat).latency),
         PercentilesMs(point.call(SimCall::kAcquireLease).latency),
         PercentilesMs(point.call(SimCall::kCompleteLease).latency),
         PercentilesMs(point.call(SimCall::kProgress).latency),
         absl::StrCat(point.call(SimCall::kHeartbeat).answered), MiB(point.resident_bytes),
         Refusals(point),
         absl::StrFormat("%.2f",
                         point.seconds > 0 ? point.simulator_cpu_seconds / point.seconds : 0),
         absl::StrCat(Ms(point.lateness.Percentile(99)), " / ", point.skipped_events)});
  }
  report.Table(coordinator);
  report.Paragraph(absl::StrCat("What broke first: ", FirstBreak(run)));

  report.SubHeading("One shard by concurrent pushers");
  MarkdownTable shard({"kind", "pushers", "push KiB", "applied pushes/s", "vs 1 pusher",
                       "push p50 / p99 ms", "shard CPU, cores", "shard RSS MiB", "not applied"});
  for (const ShardPoint& point : run.shard) {
    double base = 0;
    for (const ShardPoint& other : run.shard) {
      if (other.kind == point.kind && other.pushers == 1) base = other.AppliedPerSecond();
    }
    std::string not_applied = point.not_applied == 0 ? "0" : point.not_applied_detail;
    if (!point.broke.empty()) not_applied = absl::StrCat(not_applied, "; ", point.broke);
    shard.AddRow(
        {point.kind, absl::StrCat(point.pushers),
         absl::StrFormat("%.1f", point.push_bytes / 1024.0),
         absl::StrFormat("%.0f", point.AppliedPerSecond()), Ratio(point.AppliedPerSecond(), base),
         PercentilesMs(point.latency),
         absl::StrFormat("%.2f", point.seconds > 0 ? point.cpu_seconds / point.seconds : 0),
         MiB(point.resident_bytes), not_applied});
  }
  report.Table(shard);
}

}  // namespace bench
}  // namespace pstrain
