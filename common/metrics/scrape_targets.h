#ifndef PSTRAIN_COMMON_METRICS_SCRAPE_TARGETS_H_
#define PSTRAIN_COMMON_METRICS_SCRAPE_TARGETS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pstrain {

// One /metrics endpoint for Prometheus to scrape, and the labels it adds to
// every series scraped from it.
struct ScrapeTarget {
  std::string address;  // host:port
  std::map<std::string, std::string> labels;
};

// The targets in Prometheus' file-based service discovery format
// (file_sd_configs): a JSON array of {"targets": [...], "labels": {...}},
// one group per target.
std::string ScrapeTargetsJson(const std::vector<ScrapeTarget>& targets);

// Writes ScrapeTargetsJson to `path` atomically (a temporary file renamed
// into place), so a Prometheus watching the file never reads half of it.
// Internal: the file cannot be written.
absl::Status WriteScrapeTargets(const std::string& path, const std::vector<ScrapeTarget>& targets);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_SCRAPE_TARGETS_H_
