#ifndef PSTRAIN_COMMON_DATA_FASHION_MNIST_H_
#define PSTRAIN_COMMON_DATA_FASHION_MNIST_H_

// Fashion-MNIST (and MNIST) in the IDX format, gzipped as Debian's
// dataset-fashion-mnist installs it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/byte_buffer.h"
#include "common/data/in_memory_source.h"

namespace pstrain {

struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  ByteBuffer pixels;  // count * rows * cols, row-major
};

// Parses an idx3-ubyte image file's bytes, which become the pixels (the
// header dropped, nothing copied). `file` names it in errors.
// InvalidArgument, naming the file, the byte offset and the reason: bad
// magic number, a zero dimension, fewer bytes than the header promises
// (truncated) or more (trailing bytes).
absl::StatusOr<IdxImages> ParseIdxImages(ByteBuffer bytes, absl::string_view file);

// Parses an idx1-ubyte label file's bytes; errors as ParseIdxImages.
absl::StatusOr<std::vector<uint8_t>> ParseIdxLabels(absl::string_view bytes,
                                                    absl::string_view file);

// Loads one split from `dir`: train-* (60,000 examples) when `test` is
// false, t10k-* (10,000) when true. Pixels read as value / 255 in [0, 1];
// images are 28x28x1; labels are class ids 0-9.
// NotFound: a missing file. InvalidArgument: a malformed file, image and
// label counts that differ, or a label above 9.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadFashionMnist(absl::string_view dir, bool test);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_FASHION_MNIST_H_
