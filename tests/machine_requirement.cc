#include "tests/machine_requirement.h"

#include <cstdlib>
#include <cstring>

namespace pstrain {
namespace testing_util {

bool UnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

}  // namespace testing_util
}  // namespace pstrain
