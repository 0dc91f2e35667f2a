#ifndef PSTRAIN_CLIENT_REPORT_HTML_ESCAPE_H_
#define PSTRAIN_CLIENT_REPORT_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {

// `text` safe as HTML or XML character data and as a quoted attribute
// value: & < > " ' replaced by entities, and control characters that XML
// forbids (all below 0x20 but tab, newline and carriage return) replaced by
// U+FFFD, so any file name or tag yields a well-formed page.
std::string EscapeHtml(absl::string_view text);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_HTML_ESCAPE_H_
