#ifndef PSTRAIN_COMMON_DATA_TFRECORD_READER_H_
#define PSTRAIN_COMMON_DATA_TFRECORD_READER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/data/in_memory_source.h"
#include "protos/job.pb.h"

namespace pstrain {

// Reads the TFRecord files a TfRecordSource names (file_patterns.h), each
// plain or gzipped (gzip_file.h) as its compression says, a record at a
// time, checking each record's length and data CRCs, and decodes every
// record as a tf.Example (tf_example_decoder.h). The examples are held in
// memory; the files are not.
// NotFound: a path or pattern that matches no file.
// DataLoss naming the file and the record's offset (in the inflated stream
// of a gzipped file): a CRC that does not match, a truncated record.
// InvalidArgument naming the file, the record's index and offset, and the
// feature: a record the decoder refuses; or broken gzip data, or no records
// at all.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadTfRecord(Env& env, const TfRecordSource& spec);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TFRECORD_READER_H_
