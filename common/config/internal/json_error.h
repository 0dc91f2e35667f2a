#ifndef PSTRAIN_COMMON_CONFIG_INTERNAL_JSON_ERROR_H_
#define PSTRAIN_COMMON_CONFIG_INTERNAL_JSON_ERROR_H_

#include <string>

#include "google/protobuf/stubs/status.h"

namespace pstrain {
namespace config_internal {

// The message of a status from protobuf's JSON parser, on one line.
// Protobuf's syntax errors span three lines: the problem, the text around it,
// and a caret under the spot. The caret means nothing once the message is one
// line of a status, so this keeps the problem and quotes the text:
// "Unexpected token. (near '"mode": }')".
std::string JsonErrorMessage(const google::protobuf::util::Status& status);

}  // namespace config_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_INTERNAL_JSON_ERROR_H_
