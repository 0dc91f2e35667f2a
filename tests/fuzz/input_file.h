#ifndef PSTRAIN_TESTS_FUZZ_INPUT_FILE_H_
#define PSTRAIN_TESTS_FUZZ_INPUT_FILE_H_

// Fuzz targets whose readers take file names (and find them by glob, which
// an in-memory Env cannot serve) write each input to a real file.

#include <cstddef>
#include <cstdint>
#include <string>

namespace pstrain {
namespace fuzz {

// Writes the input to a file named `name` (with the process id, so that
// parallel fuzzing jobs do not share one) under $TEST_TMPDIR or /tmp, in
// place of the previous input, and returns its path.
std::string WriteInputFile(const std::string& name, const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_FUZZ_INPUT_FILE_H_
