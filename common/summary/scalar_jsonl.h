#ifndef PSTRAIN_COMMON_SUMMARY_SCALAR_JSONL_H_
#define PSTRAIN_COMMON_SUMMARY_SCALAR_JSONL_H_

// scalars.jsonl: one JSON object per line for each scalar summary, beside
// the event files, for tools that do not read TensorBoard's format:
//
//   {"step":1200,"wall_time":1700000000.25,"tag":"loss","value":0.3125}
//
// Numbers are written in the shortest form that reads back to the same
// double. JSON has no NaN or infinities, so those values are written as the
// strings "NaN", "Infinity" and "-Infinity" (as protobuf's JSON mapping
// does). Readers ignore keys they do not know. Thread-safe.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "common/summary/scalar_record.h"

namespace pstrain {

inline constexpr absl::string_view kScalarJsonlFileName = "scalars.jsonl";

// The line for `record`, ending in '\n'.
std::string FormatScalarJsonLine(const ScalarRecord& record);

// Parses one line (without its '\n'). InvalidArgument, saying what is
// wrong, when it is not such an object: not JSON, a missing key, a step
// that is not an integer, a value that is not a number.
absl::StatusOr<ScalarRecord> ParseScalarJsonLine(absl::string_view line);

struct ScalarJsonlReadOptions {
  // A last line without its '\n' that does not parse is dropped, as a line
  // its writer did not finish, instead of being DataLoss. Default false.
  bool allow_truncated_tail = false;
};

// Every record of the file at `path`, in order; empty lines are skipped.
// DataLoss: a line that does not parse (the message names the file, the
// line number and what is wrong). NotFound: no such file.
absl::StatusOr<std::vector<ScalarRecord>> ReadScalarJsonl(
    Env& env, const std::string& path, const ScalarJsonlReadOptions& options = {});

// Cuts a partial last line (one without its '\n', left by a crash in the
// middle of a write) off the file at `path`, so that lines appended after
// it stay whole. Returns the number of bytes cut. OK with 0 if there is no
// such file.
absl::StatusOr<int64_t> TrimPartialLastLine(Env& env, const std::string& path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_SCALAR_JSONL_H_
