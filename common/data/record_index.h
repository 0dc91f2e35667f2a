#ifndef PSTRAIN_COMMON_DATA_RECORD_INDEX_H_
#define PSTRAIN_COMMON_DATA_RECORD_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/data/file_patterns.h"
#include "common/data/record_format.h"
#include "protos/data_index.pb.h"

namespace pstrain {

struct RecordIndexOptions {
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

// What LoadOrBuildRecordIndex did.
struct RecordIndexOutcome {
  bool built = false;     // false: the index beside the file was current
  std::string why_built;  // "no index yet", "the file changed since it was indexed", ...
  // Whether a built index was saved beside the file (OK when not built or
  // not asked to save).
  absl::Status saved;
  // A gzipped file's access windows when they were built but not saved
  // beside it (GzipWindowsPath); empty when they are there to read.
  std::string gzip_windows;
};

// The index of `path`, a file of `format`: loaded from beside it when that
// one is current (the file's size, modification time and sample checksum,
// the block size and the decoding key all match, it is well formed, and a
// gzipped file's access windows are beside it too), else built by scanning
// every record and decoding it, and then saved. A build reads the whole
// file once (inflating a gzipped one and recording its access points,
// gzip_access.h); loading reads only the index.
// Errors of reading the file (NotFound; DataLoss for a bad CRC or a
// truncated record; InvalidArgument naming the record, or line, and what
// the decoder refuses), or InvalidArgument: block_records <= 0.
absl::StatusOr<RecordFileIndex> LoadOrBuildRecordIndex(Env& env, const std::string& path,
                                                       const RecordFormat& format,
                                                       const RecordIndexOptions& options,
                                                       RecordIndexOutcome* outcome = nullptr);

// The summary an index keeps.
RecordSummary SummaryOf(const RecordFileIndex& index);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_RECORD_INDEX_H_
