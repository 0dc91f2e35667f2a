#ifndef PSTRAIN_CLIENT_REPORT_HTML_REPORT_H_
#define PSTRAIN_CLIENT_REPORT_HTML_REPORT_H_

// The page `pstrain report` writes: one self-contained HTML file (inline
// CSS and SVG, no scripts, nothing fetched) that is also well-formed XML,
// with every text from files escaped.

#include <string>

#include "client/report/report_data.h"
#include "common/config/pass_mode.h"

namespace pstrain {

// The title of a plot of `tag`: "train loss", "learning rate",
// "examples/s", "eval accuracy", ...; PassMode::kEval for eval metrics.
std::string PlotTitle(const std::string& tag, PassMode pass);

// The whole page: notes, one plot per series that has finite values (train,
// then eval), the checkpoints, the exports and the job spec.
std::string RenderHtmlReport(const ReportData& data);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_HTML_REPORT_H_
