#ifndef PSTRAIN_COMMON_DATA_FIELD_TEXT_H_
#define PSTRAIN_COMMON_DATA_FIELD_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {

// Bytes of a bad field an error message quotes.
inline constexpr size_t kQuotedFieldBytes = 40;

// `field` in double quotes for an error message, with its non-printable
// bytes escaped: whole when it has at most kQuotedFieldBytes bytes, else
// that many and its length ("\"0.5,0.5,0.5,0.5,...\" (20971520 bytes)"),
// so that a huge field (a file without line breaks, a binary blob) does not
// fill the terminal.
std::string QuotedField(absl::string_view field);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_FIELD_TEXT_H_
