#include "client/scale_request.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace pstrain {
namespace {

// The lines of `text` as key and value; `error` makes the status for a line
// that is not key=value.
template <typename MakeError>
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SplitKeyValues(
    absl::string_view text, MakeError error) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t equals = line.find('=');
    if (equals == absl::string_view::npos || equals == 0) {
      return error(absl::StrCat("line '", line, "' is not key=value"));
    }
    entries.emplace_back(std::string(line.substr(0, equals)), std::string(line.substr(equals + 1)));
  }
  return entries;
}

}  // namespace

absl::Status CheckScaleRequest(const ScaleRequest& request) {
  if (request.workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a cluster needs at least 1 worker, asked for ", request.workers));
  }
  if (request.workers > kMaxLocalWorkers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "at most ", kMaxLocalWorkers, " workers on one machine, asked for ", request.workers));
  }
  if (request.grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the grace must be >= 0, got ", absl::FormatDuration(request.grace)));
  }
  return absl::OkStatus();
}

std::string FormatScaleRequest(const ScaleRequest& request) {
  return absl::StrCat("workers=", request.workers,
                      "\ngrace_secs=", absl::ToDoubleSeconds(request.grace), "\n");
}

absl::StatusOr<ScaleRequest> ParseScaleRequest(absl::string_view text) {
  auto refuse = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("scale request: ", why));
  };
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> entries =
      SplitKeyValues(text, refuse);
  if (!entries.ok()) return entries.status();
  ScaleRequest request;
  bool has_workers = false;
  for (const auto& [key, value] : *entries) {
    if (key == "workers") {
      if (!absl::SimpleAtoi(value, &request.workers)) {
        return refuse(absl::StrCat("workers '", value, "' is not a whole number"));
      }
      has_workers = true;
    } else if (key == "grace_secs") {
      double seconds = 0;
      if (!absl::SimpleAtod(value, &seconds)) {
        return refuse(absl::StrCat("grace_secs '", value, "' is not a number"));
      }
      request.grace = absl::Seconds(seconds);
    } else {
      return refuse(absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (!has_workers) return refuse("no workers=N line");
  if (absl::Status checked = CheckScaleRequest(request); !checked.ok()) {
    return refuse(checked.message());
  }
  return request;
}

std::string FormatScaleAnswer(const ScaleAnswer& answer) {
  std::string text = absl::StrCat("code=", static_cast<int>(answer.result.code()), "\n");
  if (!answer.result.ok()) {
    absl::StrAppend(&text, "error=", absl::StrReplaceAll(answer.result.message(), {{"\n", " "}}),
                    "\n");
  }
  absl::StrAppend(&text, "workers=", answer.workers, "\n");
  for (const std::string& change : answer.changes) {
    absl::StrAppend(&text, "change=", absl::StrReplaceAll(change, {{"\n", " "}}), "\n");
  }
  return text;
}

absl::StatusOr<ScaleAnswer> ParseScaleAnswer(absl::string_view text) {
  auto damaged = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("scale answer: ", why));
  };
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> entries =
      SplitKeyValues(text, damaged);
  if (!entries.ok()) return entries.status();
  ScaleAnswer answer;
  int code = -1;
  std::string error;
  for (const auto& [key, value] : *entries) {
    if (key == "code") {
      if (!absl::SimpleAtoi(value, &code) || code < 0 || code > 16) {
        return damaged(absl::StrCat("code '", value, "' is no status code"));
      }
    } else if (key == "error") {
      error = value;
    } else if (key == "workers") {
      if (!absl::SimpleAtoi(value, &answer.workers)) {
        return damaged(absl::StrCat("workers '", value, "' is not a whole number"));
      }
    } else if (key == "change") {
      answer.changes.push_back(value);
    } else {
      return damaged(absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (code < 0) return damaged("no code line");
  answer.result = absl::Status(static_cast<absl::StatusCode>(code), error);
  return answer;
}

}  // namespace pstrain
