#ifndef PSTRAIN_COMMON_DATA_TEST_FILES_H_
#define PSTRAIN_COMMON_DATA_TEST_FILES_H_

// Test helpers: files under the test's temporary folder.

#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {
namespace testing_util {

// Writes `contents` to `name` under $TEST_TMPDIR (gzip-compressed when
// `gzip`), creating the folders it names, and returns the path. CHECK-fails if the file cannot be
// written.
std::string WriteTestFile(absl::string_view name, absl::string_view contents, bool gzip = false);

// Writes a Fashion-MNIST-shaped folder (gzipped IDX train-* and t10k-*
// files) of 6x6 images in 3 classes under $TEST_TMPDIR and returns it:
// class c lights up pixel rows 2c and 2c + 1, plus noise. Easy to learn, but
// only if training works.
std::string WriteToyImageDataset(int train_count, int test_count);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TEST_FILES_H_
