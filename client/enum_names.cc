#include "client/enum_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace pstrain {
namespace {

std::string WithoutPrefix(const std::string& name, absl::string_view prefix) {
  // An unknown value has no name; show its number rather than nothing.
  if (!absl::StartsWith(name, prefix)) return name.empty() ? "?" : name;
  return name.substr(prefix.size());
}

}  // namespace

std::string JobStateName(JobState state) {
  return WithoutPrefix(JobState_Name(state), "JOB_STATE_");
}

std::string StopReasonName(StopReason reason) {
  return WithoutPrefix(StopReason_Name(reason), "STOP_REASON_");
}

std::string MemberStateName(MemberState state) {
  return WithoutPrefix(MemberState_Name(state), "MEMBER_STATE_");
}

std::string MemberHealthName(MemberHealth health) {
  return WithoutPrefix(MemberHealth_Name(health), "MEMBER_HEALTH_");
}

std::string TaskRoleName(TaskType type) {
  if (type == TASK_TYPE_CHIEF) return "coordinator";
  return absl::AsciiStrToLower(WithoutPrefix(TaskType_Name(type), "TASK_TYPE_"));
}

}  // namespace pstrain
