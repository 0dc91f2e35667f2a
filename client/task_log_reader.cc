#include "client/task_log_reader.h"

#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pstrain {
namespace {

// "I" and "20261207 04:15:00.123456": the severity, then the date and time.
constexpr size_t kGlogTimeLength = 24;

}  // namespace

std::optional<absl::Time> GlogLineTime(absl::string_view line, absl::TimeZone zone) {
  if (line.size() < 1 + kGlogTimeLength ||
      absl::string_view("IWEF").find(line[0]) == absl::string_view::npos) {
    return std::nullopt;
  }
  // absl::ParseTime's %Y would take all of "20261207" for the year, so the
  // fields are read by position: yyyymmdd hh:mm:ss.uuuuuu
  const absl::string_view stamp = line.substr(1, kGlogTimeLength);
  auto field = [&](size_t at, size_t length, int64_t* value) {
    const absl::string_view digits = stamp.substr(at, length);
    return digits.find_first_not_of("0123456789") == absl::string_view::npos &&
           absl::SimpleAtoi(digits, value);
  };
  int64_t year, month, day, hour, minute, second, micros;
  if (stamp[8] != ' ' || stamp[11] != ':' || stamp[14] != ':' || stamp[17] != '.' ||
      !field(0, 4, &year) || !field(4, 2, &month) || !field(6, 2, &day) || !field(9, 2, &hour) ||
      !field(12, 2, &minute) || !field(15, 2, &second) || !field(18, 6, &micros)) {
    return std::nullopt;
  }
  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  if (civil.year() != year || civil.month() != month || civil.day() != day ||
      civil.hour() != hour || civil.minute() != minute || civil.second() != second) {
    return std::nullopt;  // out of range, such as a 13th month
  }
  return absl::FromCivil(civil, zone) + absl::Microseconds(micros);
}

TaskLogReader::TaskLogReader(Env& env, std::string path, absl::TimeZone zone)
    : env_(env), path_(std::move(path)), zone_(zone) {}

absl::StatusOr<std::vector<LogLine>> TaskLogReader::ReadNewLines() {
  absl::StatusOr<FileInfo> info = env_.Stat(path_);
  if (absl::IsNotFound(info.status())) return std::vector<LogLine>();
  if (!info.ok()) return info.status();
  if (info->size < offset_) {
    offset_ = 0;
    last_time_ = absl::InfinitePast();
  }
  if (info->size == offset_) return std::vector<LogLine>();

  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env_.NewSequentialFile(path_);
  if (!file.ok()) return file.status();
  if (absl::Status skipped = (*file)->Skip(offset_); !skipped.ok()) return skipped;
  const size_t wanted = info->size - offset_;
  std::string scratch(wanted, '\0');
  std::string added;
  while (added.size() < wanted) {
    absl::StatusOr<absl::string_view> read = (*file)->Read(wanted - added.size(), scratch.data());
    if (!read.ok()) return read.status();
    if (read->empty()) break;  // the file shrank meanwhile; the rest waits
    absl::StrAppend(&added, *read);
  }
  const size_t end_of_whole_lines = added.rfind('\n');
  if (end_of_whole_lines == std::string::npos) return std::vector<LogLine>();
  offset_ += end_of_whole_lines + 1;

  std::vector<LogLine> lines;
  for (absl::string_view text :
       absl::StrSplit(absl::string_view(added).substr(0, end_of_whole_lines), '\n')) {
    if (std::optional<absl::Time> time = GlogLineTime(text, zone_)) last_time_ = *time;
    lines.push_back({last_time_, std::string(text)});
  }
  return lines;
}

}  // namespace pstrain
