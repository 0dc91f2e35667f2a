#ifndef PSTRAIN_COMMON_CHECKSUM_INTERNAL_CRC32C_INTERNAL_H_
#define PSTRAIN_COMMON_CHECKSUM_INTERNAL_CRC32C_INTERNAL_H_

// The two implementations behind Crc32cExtend, exposed so that tests can
// check they agree. Callers outside common/checksum use crc32c.h.

#include <cstddef>
#include <cstdint>

namespace pstrain {
namespace crc32c_internal {

// Table-driven (slicing-by-8); runs on any CPU.
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);

// True if this CPU has the SSE4.2 crc32 instruction, so ExtendHardware may
// be called.
bool HardwareAvailable();

// Uses the SSE4.2 crc32 instruction. Must only be called when
// HardwareAvailable() is true; on other CPUs it would fault.
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n);

}  // namespace crc32c_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKSUM_INTERNAL_CRC32C_INTERNAL_H_
