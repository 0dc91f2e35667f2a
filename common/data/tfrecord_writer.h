#ifndef PSTRAIN_COMMON_DATA_TFRECORD_WRITER_H_
#define PSTRAIN_COMMON_DATA_TFRECORD_WRITER_H_

// Writes a data set as TFRecord of tf.Example, as TensorFlow would: the
// files the tfrecord source reads, for tests and for converting data.

#include <string>

#include "absl/status/status.h"
#include "common/checkpoint/env.h"
#include "common/data/example_source.h"

namespace pstrain {

struct TfRecordWriteOptions {
  // Gzip the file (TFRecordOptions(compression_type="GZIP")).
  bool gzip = false;
  // The features each record holds, when the data has them: the dense
  // features as one float_list; the sparse ids as int64_lists, one feature
  // <field_prefix><f> per field f when the data has num_fields, else one
  // feature <ids_feature> of all of them; the label as a float_list of one.
  std::string dense_feature = "dense";
  std::string field_prefix = "field_";
  std::string ids_feature = "ids";
  std::string label_feature = "label";
};

// Writes every example of `source` to `path`, one record each, in order.
// InvalidArgument: the sparse ids carry values other than 1 (libsvm's
// index:value), which a tfrecord source does not read; nothing is lost
// silently. Errors: the Env's, naming the file.
absl::Status WriteTfRecordFile(Env& env, const std::string& path, const ExampleSource& source,
                               const TfRecordWriteOptions& options = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TFRECORD_WRITER_H_
