#include "bench/common/metrics_scrape.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/net/http_get.h"

namespace pstrain {
namespace bench {

absl::StatusOr<MetricsPage> ScrapeMetrics(const LocalTask& task, absl::Duration timeout) {
  absl::StatusOr<std::string> text = HttpGet(task.metrics_address, "/metrics", timeout);
  if (!text.ok()) {
    return absl::UnavailableError(absl::StrCat("scraping /metrics of ", task.name(), " at ",
                                               task.metrics_address, ": ",
                                               text.status().message()));
  }
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(*text);
  if (!page.ok()) {
    return absl::InternalError(absl::StrCat(task.name(), "'s /metrics: ", page.status().message()));
  }
  return page;
}

}  // namespace bench
}  // namespace pstrain
