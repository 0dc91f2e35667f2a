#include "bench/common/metrics_page.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace pstrain {
namespace bench {
namespace {

// Parses `label="value",...` (the text between the braces). Values may hold
// escaped quotes; label names may not.
bool ParseLabels(absl::string_view text, std::map<std::string, std::string>* labels) {
  while (!text.empty()) {
    const size_t equals = text.find('=');
    if (equals == absl::string_view::npos || equals + 1 >= text.size() || text[equals + 1] != '"') {
      return false;
    }
    const std::string name(absl::StripAsciiWhitespace(text.substr(0, equals)));
    std::string value;
    size_t i = equals + 2;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      value.push_back(text[i]);
    }
    if (i >= text.size()) return false;  // no closing quote
    (*labels)[name] = value;
    text.remove_prefix(i + 1);
    text = absl::StripLeadingAsciiWhitespace(text);
    if (!text.empty() && !absl::ConsumePrefix(&text, ",")) return false;
    text = absl::StripLeadingAsciiWhitespace(text);
  }
  return true;
}

bool ParseValue(absl::string_view text, double* value) {
  // The value is the first field; a timestamp may follow.
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
  if (fields.empty()) return false;
  if (fields[0] == "+Inf") *value = HUGE_VAL;
  else if (fields[0] == "-Inf") *value = -HUGE_VAL;
  else if (fields[0] == "NaN") *value = std::strtod("nan", nullptr);
  else if (!absl::SimpleAtod(fields[0], value)) return false;
  return true;
}

bool Matches(const MetricSample& sample, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  if (sample.name != name) return false;
  for (const auto& [label, value] : labels) {
    auto found = sample.labels.find(label);
    if (found == sample.labels.end() || found->second != value) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<MetricsPage> MetricsPage::Parse(const std::string& text) {
  MetricsPage page;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    MetricSample sample;
    bool ok = false;
    const size_t brace = line.find('{');
    if (brace != absl::string_view::npos) {
      const size_t close = line.rfind('}');
      ok = close != absl::string_view::npos && close > brace &&
           ParseLabels(line.substr(brace + 1, close - brace - 1), &sample.labels) &&
           ParseValue(line.substr(close + 1), &sample.value);
      sample.name = std::string(line.substr(0, brace));
    } else {
      const size_t space = line.find(' ');
      ok = space != absl::string_view::npos && ParseValue(line.substr(space + 1), &sample.value);
      sample.name = std::string(line.substr(0, space));
    }
    if (!ok || sample.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, " of the metrics page is not a sample: ", line));
    }
    page.samples_.push_back(std::move(sample));
  }
  return page;
}

double MetricsPage::Sum(const std::string& name,
                        const std::map<std::string, std::string>& labels) const {
  double sum = 0;
  for (const MetricSample& sample : samples_) {
    if (Matches(sample, name, labels)) sum += sample.value;
  }
  return sum;
}

bool MetricsPage::Has(const std::string& name,
                      const std::map<std::string, std::string>& labels) const {
  for (const MetricSample& sample : samples_) {
    if (Matches(sample, name, labels)) return true;
  }
  return false;
}

}  // namespace bench
}  // namespace pstrain
