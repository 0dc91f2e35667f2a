#include "bench/report/load_average.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace bench {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

}  // namespace bench
}  // namespace pstrain
