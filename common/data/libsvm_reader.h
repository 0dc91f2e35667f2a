#ifndef PSTRAIN_COMMON_DATA_LIBSVM_READER_H_
#define PSTRAIN_COMMON_DATA_LIBSVM_READER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/in_memory_source.h"
#include "protos/job.pb.h"

namespace pstrain {

// Parses libsvm / svmlight text: "label index:value index:value ..." per
// line, indices strictly ascending, 1-based unless options.zero_based. Ids
// come out 0-based as sparse features with their values. A "# comment" ends
// a line; blank lines are ignored. Binary data labelled -1/+1 is relabelled
// 0/1 (when every label is -1 or +1); other labels are kept.
// InvalidArgument, as "<file>:<line>: <reason>": a label or value that is
// not a finite number, a pair without ':', an index that is not an
// integer, below the base, not above the previous one (out of order or
// repeated), or not below num_features when that is set; or no examples.
absl::StatusOr<std::unique_ptr<InMemorySource>> ParseLibsvm(absl::string_view text,
                                                            const LibsvmSource& options,
                                                            absl::string_view file);

// Reads options.path (gzipped or not) and parses it. NotFound: no file.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadLibsvm(const LibsvmSource& options);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_LIBSVM_READER_H_
