#include "bench/sparse/prometheus_sample.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pstrain {

absl::StatusOr<double> SumSamples(absl::string_view page, absl::string_view name,
                                  absl::string_view label) {
  double sum = 0;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(page, '\n')) {
    if (!absl::ConsumePrefix(&line, name)) continue;
    absl::string_view labels;
    if (absl::ConsumePrefix(&line, "{")) {
      const size_t close = line.find('}');
      if (close == absl::string_view::npos) continue;
      labels = line.substr(0, close);
      line.remove_prefix(close + 1);
    } else if (line.empty() || line.front() != ' ') {
      continue;  // a longer name that starts with `name`
    }
    if (!label.empty() && labels.find(label) == absl::string_view::npos) continue;
    line = absl::StripAsciiWhitespace(line);
    // A sample may end with a timestamp after the value.
    const absl::string_view value = line.substr(0, line.find(' '));
    double v = 0;
    if (!absl::SimpleAtod(value, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric ", name, " has a sample that is not a number: '", value, "'"));
    }
    sum += v;
    found = true;
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat(
        "no sample of ", name, label.empty() ? "" : absl::StrCat(" with ", label), " on the page"));
  }
  return sum;
}

}  // namespace pstrain
