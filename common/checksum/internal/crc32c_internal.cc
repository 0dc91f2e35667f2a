#include "common/checksum/internal/crc32c_internal.h"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace pstrain {
namespace crc32c_internal {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the word-at-a-time loops below assume little-endian loads");

// CRC32C's polynomial 0x1EDC6F41, bit-reversed: bytes enter least
// significant bit first, as in iSCSI and in the SSE4.2 instruction.
constexpr uint32_t kPolynomial = 0x82f63b78u;

// Everything below works on the CRC "register": the CRC without the final
// inversion. Crc32cExtend inverts on the way in and out. On the register the
// update is linear over GF(2), which is what lets independent streams be
// combined.

struct Tables {
  // t[k][b]: the register after byte b followed by k zero bytes, starting
  // from a zero register. t[0] alone is the classic byte-at-a-time table;
  // all eight give slicing-by-8.
  uint32_t t[8][256];
};

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ (kPolynomial & (0u - (crc & 1u)));
    }
    tables.t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t prev = tables.t[k - 1][b];
      tables.t[k][b] = (prev >> 8) ^ tables.t[0][prev & 0xff];
    }
  }
  return tables;
}

// Computed by the compiler, so there is no start-up cost and no
// initialisation order to think about.
constexpr Tables kTables = MakeTables();

inline uint64_t Load64(const unsigned char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

inline uint32_t UpdateByte(uint32_t crc, unsigned char byte) {
  return kTables.t[0][(crc ^ byte) & 0xff] ^ (crc >> 8);
}

// Eight bytes at once; `word` is the next eight bytes, little-endian.
constexpr uint32_t UpdateWord(uint32_t crc, uint64_t word) {
  const uint64_t x = word ^ crc;
  return kTables.t[7][x & 0xff] ^ kTables.t[6][(x >> 8) & 0xff] ^ kTables.t[5][(x >> 16) & 0xff] ^
         kTables.t[4][(x >> 24) & 0xff] ^ kTables.t[3][(x >> 32) & 0xff] ^
         kTables.t[2][(x >> 40) & 0xff] ^ kTables.t[1][(x >> 48) & 0xff] ^ kTables.t[0][x >> 56];
}

#if defined(__x86_64__)

// The crc32 instruction has a latency of three cycles and a throughput of
// one, so a single dependent chain runs at a third of the possible speed.
// Long inputs are therefore cut into three adjacent blocks whose registers
// are computed side by side and then combined: by linearity,
//   crc(A B C) = Z(Z(crc(A)) ^ crc0(B)) ^ crc0(C)
// where crc0 starts from a zero register and Z(c) is the register after
// feeding `block` zero bytes to c, itself linear in c and so a sum of four
// byte-indexed tables.
struct ShiftTable {
  uint32_t z[4][256];
};

constexpr ShiftTable MakeShiftTable(size_t block) {
  // Z of each single bit of the register, then Z of every byte value at
  // each byte position as the XOR of its bits.
  uint32_t basis[32] = {};
  for (int bit = 0; bit < 32; ++bit) {
    uint32_t crc = uint32_t{1} << bit;
    for (size_t i = 0; i < block; i += 8) crc = UpdateWord(crc, 0);
    basis[bit] = crc;
  }
  ShiftTable table{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t z = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if (b & (1u << bit)) z ^= basis[8 * k + bit];
      }
      table.z[k][b] = z;
    }
  }
  return table;
}

inline uint32_t Shift(const ShiftTable& table, uint32_t crc) {
  return table.z[0][crc & 0xff] ^ table.z[1][(crc >> 8) & 0xff] ^ table.z[2][(crc >> 16) & 0xff] ^
         table.z[3][crc >> 24];
}

// Two block sizes: long blocks for the bulk of large buffers, short ones so
// that a tail of a few KiB still runs three streams. Both multiples of 8.
constexpr size_t kLongBlock = 4096;
constexpr size_t kShortBlock = 256;
constexpr ShiftTable kLongShift = MakeShiftTable(kLongBlock);
constexpr ShiftTable kShortShift = MakeShiftTable(kShortBlock);

__attribute__((target("sse4.2"))) inline uint64_t ThreeWay(uint64_t crc, const unsigned char* p,
                                                           size_t block, const ShiftTable& shift) {
  uint64_t c1 = 0;
  uint64_t c2 = 0;
  for (size_t i = 0; i < block; i += 8) {
    crc = _mm_crc32_u64(crc, Load64(p + i));
    c1 = _mm_crc32_u64(c1, Load64(p + block + i));
    c2 = _mm_crc32_u64(c2, Load64(p + 2 * block + i));
  }
  const uint32_t ab =
      Shift(shift, Shift(shift, static_cast<uint32_t>(crc)) ^ static_cast<uint32_t>(c1));
  return ab ^ static_cast<uint32_t>(c2);
}

#endif  // defined(__x86_64__)

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t reg = ~crc;
  for (; n >= 8; p += 8, n -= 8) reg = UpdateWord(reg, Load64(p));
  for (; n > 0; ++p, --n) reg = UpdateByte(reg, *p);
  return ~reg;
}

bool HardwareAvailable() {
#if defined(__x86_64__)
  // Safe to call before static constructors have run.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const char* data,
                                                          size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t reg = ~crc;
  for (; n >= 3 * kLongBlock; p += 3 * kLongBlock, n -= 3 * kLongBlock) {
    reg = ThreeWay(reg, p, kLongBlock, kLongShift);
  }
  for (; n >= 3 * kShortBlock; p += 3 * kShortBlock, n -= 3 * kShortBlock) {
    reg = ThreeWay(reg, p, kShortBlock, kShortShift);
  }
  for (; n >= 8; p += 8, n -= 8) reg = _mm_crc32_u64(reg, Load64(p));
  uint32_t reg32 = static_cast<uint32_t>(reg);
  for (; n > 0; ++p, --n) reg32 = _mm_crc32_u8(reg32, *p);
  return ~reg32;
}

#else

uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  // Unreachable: HardwareAvailable() is false here.
  return ExtendPortable(crc, data, n);
}

#endif  // defined(__x86_64__)

}  // namespace crc32c_internal
}  // namespace pstrain
