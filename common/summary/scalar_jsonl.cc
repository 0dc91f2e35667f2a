#include "common/summary/scalar_jsonl.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr size_t kReadChunkBytes = 1 << 16;

// Integers up to this magnitude survive the trip through a JSON number
// read as a double.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

void AppendNumber(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    char buffer[32];
    const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out->append(buffer, result.ptr);
  }
}

void AppendJsonString(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 0xf]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

absl::StatusOr<double> NumberField(const Struct& object, const char* key) {
  const auto it = object.fields().find(key);
  if (it == object.fields().end())
    return absl::InvalidArgumentError(absl::StrCat("no \"", key, "\""));
  const Value& v = it->second;
  if (v.kind_case() == Value::kNumberValue) return v.number_value();
  if (v.kind_case() == Value::kStringValue) {
    if (v.string_value() == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (v.string_value() == "Infinity") return std::numeric_limits<double>::infinity();
    if (v.string_value() == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is not a number"));
}

absl::Status LineError(const std::string& path, int64_t line_number, const absl::Status& error) {
  return absl::DataLossError(absl::StrCat(path, ": line ", line_number, ": ", error.message()));
}

}  // namespace

std::string FormatScalarJsonLine(const ScalarRecord& record) {
  std::string line = absl::StrCat("{\"step\":", record.step, ",\"wall_time\":");
  AppendNumber(record.wall_time, &line);
  line.append(",\"tag\":");
  AppendJsonString(record.tag, &line);
  line.append(",\"value\":");
  AppendNumber(record.value, &line);
  line.append("}\n");
  return line;
}

absl::StatusOr<ScalarRecord> ParseScalarJsonLine(absl::string_view line) {
  Struct object;
  google::protobuf::util::JsonParseOptions options;
  const google::protobuf::util::Status parsed =
      google::protobuf::util::JsonStringToMessage(std::string(line), &object, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JSON object: ", parsed.message().ToString()));
  }
  ScalarRecord record;
  ASSIGN_OR_RETURN(const double step, NumberField(object, "step"));
  if (!(std::floor(step) == step && std::fabs(step) <= kMaxExactInteger)) {
    return absl::InvalidArgumentError(absl::StrCat("\"step\" ", step, " is not an integer"));
  }
  record.step = static_cast<int64_t>(step);
  ASSIGN_OR_RETURN(record.wall_time, NumberField(object, "wall_time"));
  ASSIGN_OR_RETURN(record.value, NumberField(object, "value"));
  const auto tag = object.fields().find("tag");
  if (tag == object.fields().end() || tag->second.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError("no string \"tag\"");
  }
  record.tag = tag->second.string_value();
  return record;
}

absl::StatusOr<std::vector<ScalarRecord>> ReadScalarJsonl(Env& env, const std::string& path,
                                                          const ScalarJsonlReadOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  std::vector<ScalarRecord> records;
  std::vector<char> scratch(kReadChunkBytes);
  std::string pending;  // the current line so far
  int64_t line_number = 0;
  auto take_line = [&](absl::string_view line) -> absl::Status {
    ++line_number;
    if (line.empty()) return absl::OkStatus();
    absl::StatusOr<ScalarRecord> record = ParseScalarJsonLine(line);
    if (!record.ok()) return LineError(path, line_number, record.status());
    records.push_back(*std::move(record));
    return absl::OkStatus();
  };
  for (;;) {
    ASSIGN_OR_RETURN(absl::string_view piece, file->Read(scratch.size(), scratch.data()));
    if (piece.empty()) break;
    for (size_t newline; (newline = piece.find('\n')) != absl::string_view::npos;) {
      pending.append(piece.data(), newline);
      RETURN_IF_ERROR(take_line(pending));
      pending.clear();
      piece.remove_prefix(newline + 1);
    }
    pending.append(piece.data(), piece.size());
  }
  if (!pending.empty()) {
    absl::Status last = take_line(pending);
    if (!last.ok() && !options.allow_truncated_tail) return last;
  }
  return records;
}

absl::StatusOr<int64_t> TrimPartialLastLine(Env& env, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  if (absl::IsNotFound(file.status())) return 0;
  RETURN_IF_ERROR(file.status());
  std::vector<char> scratch(kReadChunkBytes);
  int64_t size = 0;
  int64_t whole_lines_end = 0;  // just past the last '\n'
  for (;;) {
    ASSIGN_OR_RETURN(absl::string_view piece, (*file)->Read(scratch.size(), scratch.data()));
    if (piece.empty()) break;
    const size_t newline = piece.rfind('\n');
    if (newline != absl::string_view::npos) {
      whole_lines_end = size + static_cast<int64_t>(newline) + 1;
    }
    size += static_cast<int64_t>(piece.size());
  }
  if (whole_lines_end == size) return 0;
  RETURN_IF_ERROR(env.TruncateFile(path, whole_lines_end));
  return size - whole_lines_end;
}

}  // namespace pstrain
