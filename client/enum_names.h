#ifndef PSTRAIN_CLIENT_ENUM_NAMES_H_
#define PSTRAIN_CLIENT_ENUM_NAMES_H_

// The protocol's enum values as people and scripts read them: without their
// type prefix ("SUCCEEDED", not "JOB_STATE_SUCCEEDED").

#include <string>

#include "protos/cluster.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

std::string JobStateName(JobState state);            // "RUNNING"
std::string StopReasonName(StopReason reason);       // "MAX_STEPS"
std::string MemberStateName(MemberState state);      // "IDLE"
std::string MemberHealthName(MemberHealth health);   // "OK"
std::string TaskRoleName(TaskType type);             // "coordinator", "ps", ...

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_ENUM_NAMES_H_
