#ifndef PSTRAIN_COMMON_CONFIG_JOB_SPEC_PARSER_H_
#define PSTRAIN_COMMON_CONFIG_JOB_SPEC_PARSER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protos/job.pb.h"

namespace pstrain {

// The largest job spec LoadJobSpecFile reads and the parsers accept. Real specs are a few
// kilobytes; the cap keeps a wrong path (a dataset, /dev/zero) from being read
// into memory.
inline constexpr size_t kMaxJobSpecFileBytes = 4 << 20;

// Reads a JobSpec from `path`, by its extension: ".pbtxt", ".textproto" and
// ".txt" as protobuf text format, ".json" as proto3 JSON (field names in
// lowerCamelCase or as in the .proto, enums by name). Extensions are matched
// without regard to case. Defaults are not filled: see PrepareJobSpec.
//
// Returns:
//   InvalidArgument for any other extension (naming it), a file larger than
//     kMaxJobSpecFileBytes, a directory, or a spec that does not parse. Text
//     format errors say where, as "<path>:<line>:<column>: <what>"; JSON errors
//     as "<path>: <what>", naming an unknown field.
//   NotFound when `path` does not exist; PermissionDenied when it cannot be
//     read; Internal for other I/O errors. The message names the path.
absl::StatusOr<JobSpec> LoadJobSpecFile(const std::string& path);

// Parses a JobSpec in protobuf text format. Unknown fields and repeated
// non-repeated fields are refused. `source_name` starts each error message:
// "<source_name>:<line>:<column>: <what>", lines and columns counted from 1.
// Returns InvalidArgument on any error, or for text larger than
// kMaxJobSpecFileBytes.
absl::StatusOr<JobSpec> ParseJobSpecText(absl::string_view text,
                                         absl::string_view source_name = "<job spec>");

// Parses a JobSpec in proto3 JSON. Unknown fields are refused, naming the
// field ("<source_name>: (model.mlp) hidenUnits: Cannot find field.").
// Returns InvalidArgument on any error, or for text larger than
// kMaxJobSpecFileBytes.
absl::StatusOr<JobSpec> ParseJobSpecJson(absl::string_view json,
                                         absl::string_view source_name = "<job spec>");

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_SPEC_PARSER_H_
