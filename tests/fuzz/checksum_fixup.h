#ifndef PSTRAIN_TESTS_FUZZ_CHECKSUM_FIXUP_H_
#define PSTRAIN_TESTS_FUZZ_CHECKSUM_FIXUP_H_

// Checkpoint files carry CRC32Cs that random bytes almost never match, so a
// fuzzer that only mutates them stops at the checksum check. These rewrite
// the checksums of mutated bytes so the parsers behind the check are
// fuzzed too. The framing is followed leniently: whatever does not frame
// is left as it is.

#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {
namespace fuzz {

// `bytes` with a correct MANIFEST checksum field at the end: the last five
// bytes are replaced when they are a checksum field, else one is appended.
std::string WithManifestChecksum(absl::string_view bytes);

// `bytes` with every record of a shard file (common/checkpoint/shard_file.h)
// given its right CRC32C, as far as the records' lengths frame the bytes.
std::string WithRecordChecksums(absl::string_view bytes);

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_FUZZ_CHECKSUM_FIXUP_H_
