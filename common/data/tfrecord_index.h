#ifndef PSTRAIN_COMMON_DATA_TFRECORD_INDEX_H_
#define PSTRAIN_COMMON_DATA_TFRECORD_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/data/file_patterns.h"
#include "protos/data_index.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// What a TfRecordSource's index summary depends on: its decoding options
// (features, label, hash buckets), not its paths or compression. A readable
// string, stored in each index.
std::string TfRecordDecodingKey(const TfRecordSource& spec);

struct TfRecordIndexOptions {
  // Records per block; > 0.
  int64_t block_records = 1024;
  // Values per dense feature every record must hold (another file of the
  // data set found them); empty: the file's first record sets them.
  std::vector<int64_t> dense_widths;
  // Save a built index beside the file. A folder that cannot be written is
  // logged, not an error: each process that reads the file then builds the
  // index again.
  bool save = true;
};

// What LoadOrBuildTfRecordIndex did.
struct TfRecordIndexOutcome {
  bool built = false;     // false: the index beside the file was current
  std::string why_built;  // "no index yet", "the file changed since it was indexed", ...
  // Whether a built index was saved beside the file (OK when not built or
  // not asked to save).
  absl::Status saved;
};

// The index of uncompressed TFRecord file `path`: loaded from beside it
// when that one is current (the file's size and modification time, the
// block size and the decoding key all match, and it is well formed), else
// built by reading every record, checking its CRCs and decoding it as
// `spec` says, and then saved. A build reads the whole file once; loading
// reads only the index.
// Errors of reading the file (NotFound; DataLoss for a bad CRC or a
// truncated record; InvalidArgument naming the record and feature the
// decoder refuses), or InvalidArgument: block_records <= 0.
absl::StatusOr<RecordFileIndex> LoadOrBuildTfRecordIndex(Env& env, const std::string& path,
                                                         const TfRecordSource& spec,
                                                         const TfRecordIndexOptions& options,
                                                         TfRecordIndexOutcome* outcome = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TFRECORD_INDEX_H_
