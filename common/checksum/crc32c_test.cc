#include "common/checksum/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/checksum/internal/crc32c_internal.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

// The known-answer cases of RFC 3720, appendix B.4, plus the customary
// check value of "123456789".
struct KnownAnswer {
  std::string name;
  std::string data;
  uint32_t crc;
};

std::vector<KnownAnswer> KnownAnswers() {
  std::vector<KnownAnswer> cases;
  cases.push_back({"32 zeros", std::string(32, '\0'), 0x8A9136AAu});
  cases.push_back({"32 0xFF", std::string(32, '\xff'), 0x62A8AB43u});
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  cases.push_back({"0..31", ascending, 0x46DD794Eu});
  cases.push_back({"31..0", descending, 0x113FDB5Cu});
  // An iSCSI read command PDU.
  cases.push_back({"iSCSI read",
                   Bytes({0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                          0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}),
                   0xD9963A56u});
  cases.push_back({"123456789", "123456789", 0xE3069283u});
  return cases;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Crc32cTest, KnownAnswers) {
  for (const KnownAnswer& c : KnownAnswers()) {
    EXPECT_EQ(Crc32c(c.data), c.crc) << c.name;
  }
}

TEST(Crc32cTest, PortableGivesKnownAnswers) {
  for (const KnownAnswer& c : KnownAnswers()) {
    EXPECT_EQ(crc32c_internal::ExtendPortable(0, c.data.data(), c.data.size()), c.crc) << c.name;
  }
}

TEST(Crc32cTest, HardwareGivesKnownAnswers) {
  if (!crc32c_internal::HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  for (const KnownAnswer& c : KnownAnswers()) {
    EXPECT_EQ(crc32c_internal::ExtendHardware(0, c.data.data(), c.data.size()), c.crc) << c.name;
  }
}

TEST(Crc32cTest, EmptyInputLeavesCrcUnchanged) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32cExtend(0x12345678u, nullptr, 0), 0x12345678u);
}

// The hardware path switches between three-way blocks of 3 * 4096 and
// 3 * 256 bytes, single words and single bytes; lengths around each boundary
// and starts at every offset within a word exercise each switch.
TEST(Crc32cTest, HardwareAndPortableAgreeOnEveryPath) {
  if (!crc32c_internal::HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937_64 rng(42);
  const std::string buffer = RandomBytes(rng, 3 * 4096 * 3 + 3 * 256 * 2 + 64);
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 64; ++n) lengths.push_back(n);
  for (size_t boundary : {size_t{3 * 256}, size_t{3 * 4096}, size_t{2 * 3 * 4096}}) {
    for (size_t n = boundary - 9; n <= boundary + 9; ++n) lengths.push_back(n);
  }
  for (int i = 0; i < 200; ++i) lengths.push_back(rng() % (buffer.size() - 8));
  for (size_t n : lengths) {
    for (size_t start = 0; start < 8; ++start) {
      const char* p = buffer.data() + start;
      ASSERT_EQ(crc32c_internal::ExtendHardware(0x9e3779b9u, p, n),
                crc32c_internal::ExtendPortable(0x9e3779b9u, p, n))
          << "length " << n << " start " << start;
    }
  }
}

TEST(Crc32cTest, ExtendInPiecesEqualsOneShot) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::string data = RandomBytes(rng, rng() % 40000);
    const uint32_t whole = Crc32c(data);
    for (ExtendFn extend : {&Crc32cExtend, &crc32c_internal::ExtendPortable}) {
      uint32_t crc = 0;
      size_t pos = 0;
      while (pos < data.size()) {
        const size_t piece = std::min<size_t>(data.size() - pos, rng() % 5000);
        crc = extend(crc, data.data() + pos, piece);
        pos += piece;
      }
      ASSERT_EQ(crc, whole) << "trial " << trial << " size " << data.size();
    }
  }
}

TEST(Crc32cTest, DifferentDataGivesDifferentCrc) {
  EXPECT_NE(Crc32c("a"), Crc32c("b"));
  EXPECT_NE(Crc32c(std::string(1, '\0')), Crc32c(std::string(2, '\0')));
}

TEST(Crc32cTest, MaskRoundTripsAndChangesTheValue) {
  for (const KnownAnswer& c : KnownAnswers()) {
    const uint32_t masked = Crc32cMask(c.crc);
    EXPECT_NE(masked, c.crc) << c.name;
    EXPECT_NE(Crc32cMask(masked), masked) << c.name;
    EXPECT_EQ(Crc32cUnmask(masked), c.crc) << c.name;
    EXPECT_EQ(Crc32cUnmask(Crc32cUnmask(Crc32cMask(masked))), c.crc) << c.name;
  }
}

}  // namespace
}  // namespace pstrain
