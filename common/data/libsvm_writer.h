#ifndef PSTRAIN_COMMON_DATA_LIBSVM_WRITER_H_
#define PSTRAIN_COMMON_DATA_LIBSVM_WRITER_H_

// Writes a data set as libsvm / svmlight text, the format the libsvm source
// reads (common/data/libsvm_reader.h): for converting data and for tests.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/checkpoint/env.h"
#include "common/data/dataset_info.h"
#include "common/data/example_source.h"

namespace pstrain {

struct LibsvmWriteOptions {
  // Gzip the file; the libsvm source reads either.
  bool gzip = false;
};

// Writes every example of `source` to `path`, one line each, in order:
// "label index:value ...", indices 1-based and strictly ascending, as
// libsvm's own tools write them. The dense features are indices 1 to
// dense_dim, zeros left out (libsvm's sparse convention); sparse id i is
// index dense_dim + i + 1. An id repeated within an example is written once
// with the sum of its values, which is what a linear model over the ids
// computes. Labels and values are written in the shortest form that reads
// back as the same float. Errors: the Env's, naming the file; the source's.
absl::Status WriteLibsvmFile(Env& env, const std::string& path, const ExampleSource& source,
                             const LibsvmWriteOptions& options = {});

// The features of every line written from data like `info`'s
// (dense_dim + sparse_dim): the num_features a libsvm source should set, so
// that training and evaluation files whose largest index differs read with
// the same width.
int64_t LibsvmFeatureCount(const DatasetInfo& info);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_LIBSVM_WRITER_H_
