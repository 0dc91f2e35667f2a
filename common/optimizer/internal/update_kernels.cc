#include "common/optimizer/internal/update_kernels.h"

namespace pstrain {
namespace optimizer_internal {

bool CpuHasAvx() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx");
}

const UpdateKernels& BestUpdateKernels() {
  static const UpdateKernels kernels =
      CpuHasAvx() ? UpdateKernels{AdamAvx, AdagradAvx} : UpdateKernels{AdamSse2, AdagradSse2};
  return kernels;
}

}  // namespace optimizer_internal
}  // namespace pstrain
