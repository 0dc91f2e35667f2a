#include "common/checksum/crc32c.h"

#include "common/checksum/internal/crc32c_internal.h"

namespace pstrain {

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
  // Asked once per process; the answer cannot change.
  static const bool hardware = crc32c_internal::HardwareAvailable();
  return hardware ? crc32c_internal::ExtendHardware(crc, data, n)
                  : crc32c_internal::ExtendPortable(crc, data, n);
}

}  // namespace pstrain
