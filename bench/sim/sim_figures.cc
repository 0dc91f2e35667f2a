#include "bench/sim/sim_figures.h"

namespace pstrain {
namespace bench {

double CoordinatorPoint::CpuMicrosPerMemberSecond() const {
  if (members <= 0 || seconds <= 0) return 0;
  return cpu_seconds * 1e6 / seconds / members;
}

}  // namespace bench
}  // namespace pstrain
