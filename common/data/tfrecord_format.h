#ifndef PSTRAIN_COMMON_DATA_TFRECORD_FORMAT_H_
#define PSTRAIN_COMMON_DATA_TFRECORD_FORMAT_H_

#include <memory>

#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

// The files of `spec` as records of tf.Example (tf_example_decoder.h) in
// TFRecord framing, plain or gzipped, for streaming. `spec` must have
// passed job-spec validation.
std::unique_ptr<const RecordFormat> TfRecordFormat(const TfRecordSource& spec);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TFRECORD_FORMAT_H_
