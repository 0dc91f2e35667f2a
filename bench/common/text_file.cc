#include "bench/common/text_file.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace bench {

absl::Status WriteTextFile(const std::string& path, absl::string_view text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace bench
}  // namespace pstrain
