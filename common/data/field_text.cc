#include "common/data/field_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace pstrain {

std::string QuotedField(absl::string_view field) {
  if (field.size() <= kQuotedFieldBytes) return absl::StrCat("\"", absl::CHexEscape(field), "\"");
  return absl::StrCat("\"", absl::CHexEscape(field.substr(0, kQuotedFieldBytes)), "...\" (",
                      field.size(), " bytes)");
}

}  // namespace pstrain
