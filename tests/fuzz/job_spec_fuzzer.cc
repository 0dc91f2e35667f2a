// Fuzzes the job-spec loader: the bytes as a text-format spec and as a JSON
// spec, then PrepareJobSpec (defaults and validation) on whatever parses,
// as a submit does. Besides "no crash", checks what a user relies on: a
// prepared spec validates again, filling defaults twice changes nothing,
// and a spec written back as text reads back the same.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_parser.h"
#include "common/config/job_spec_validation.h"
#include "glog/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/quiet_logs.h"

namespace pstrain {
namespace {

void CheckPrepared(const JobSpec& raw) {
  absl::StatusOr<JobSpec> prepared = PrepareJobSpec(raw);
  if (!prepared.ok()) {
    // A refusal must say why; an empty message is an unusable error.
    CHECK(absl::IsInvalidArgument(prepared.status())) << prepared.status();
    CHECK(!prepared.status().message().empty());
    return;
  }
  CHECK(ValidateJobSpec(*prepared).ok()) << "a prepared spec fails validation";

  JobSpec refilled = *prepared;
  FillJobSpecDefaults(&refilled);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(refilled, *prepared))
      << "FillJobSpecDefaults is not idempotent:\n"
      << prepared->DebugString() << "\nbecame\n"
      << refilled.DebugString();

  // What JobStatus.spec shows a user must load again as the same job.
  std::string text;
  CHECK(google::protobuf::TextFormat::PrintToString(*prepared, &text));
  absl::StatusOr<JobSpec> reread = ParseJobSpecText(text, "<printed>");
  CHECK(reread.ok()) << reread.status() << "\n" << text;
  google::protobuf::util::MessageDifferencer same;
  google::protobuf::util::DefaultFieldComparator floats;
  floats.set_treat_nan_as_equal(true);
  same.set_field_comparator(&floats);
  CHECK(same.Compare(*reread, *prepared)) << "text round trip changed the spec:\n" << text;
}

}  // namespace
}  // namespace pstrain

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  pstrain::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (const auto& parse : {&pstrain::ParseJobSpecText, &pstrain::ParseJobSpecJson}) {
    absl::StatusOr<pstrain::JobSpec> spec = parse(bytes, "<fuzz>");
    if (spec.ok()) {
      pstrain::CheckPrepared(*spec);
    } else {
      CHECK(absl::IsInvalidArgument(spec.status())) << spec.status();
    }
  }
  return 0;
}
