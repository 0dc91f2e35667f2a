#ifndef PSTRAIN_CLIENT_REPORT_TESTING_XML_CHECK_H_
#define PSTRAIN_CLIENT_REPORT_TESTING_XML_CHECK_H_

// A strict check that a text is well-formed XML, for tests of pages that
// are written to be both HTML and XML: one root element; every tag closed
// in order; attribute names unique and values quoted; '<' only in markup
// and '&' only in the five predefined or numeric entities; a DOCTYPE and
// comments allowed. (No DTDs, CDATA sections or processing instructions
// beyond an XML declaration: the report uses none.)

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pstrain {
namespace testing_util {

// OK, or InvalidArgument saying what is wrong and at which line.
absl::Status CheckWellFormedXml(absl::string_view text);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_TESTING_XML_CHECK_H_
