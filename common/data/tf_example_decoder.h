#ifndef PSTRAIN_COMMON_DATA_TF_EXAMPLE_DECODER_H_
#define PSTRAIN_COMMON_DATA_TF_EXAMPLE_DECODER_H_

// tf.Example records as pstrain's examples: a TfRecordSource names which
// features are the dense features, which are categorical (sparse ids), and
// which is the label.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/data/categorical_id.h"
#include "common/data/in_memory_source.h"
#include "protos/job.pb.h"
#include "protos/tf_example.pb.h"

namespace pstrain {

// Not thread-safe: it learns the dense width from the first record.
class TfExampleDecoder {
 public:
  // `spec` must have passed job-spec validation (a label, features named
  // once); unset hash_buckets take their default.
  explicit TfExampleDecoder(const TfRecordSource& spec);

  // Parses `record` as a tf.Example and appends it to *examples (dense
  // floats, sparse ids with row_splits, label). On error *examples is
  // unchanged. InvalidArgument, for the caller to prefix with where the
  // record is: not a tf.Example; a dense feature or the label missing; a
  // feature of a kind it cannot be (bytes as dense or label, floats as
  // categorical); a dense feature with another number of values than in
  // the first record; a label of other than one value, or not finite; a
  // dense value that is not finite.
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples);

  // Values per dense feature: learned from the first record, or set before
  // it (every record must then hold these, as in another file of the same
  // data set).
  const std::vector<int64_t>& dense_widths() const { return dense_widths_; }
  void ExpectDenseWidths(std::vector<int64_t> widths) { dense_widths_ = std::move(widths); }
  // Whether every record so far held one value of each categorical feature.
  bool one_id_per_field() const { return one_id_per_field_; }

  // Set on *examples once every record is in: sparse_dim, and num_fields
  // when every record held one value of each categorical feature.
  void Finish(InMemorySource::Examples* examples) const;

 private:
  // Appends the dense features to *dense; on error, part of them may be.
  absl::Status AppendDense(const tensorflow::Features& features, std::vector<float>* dense);
  absl::Status AppendIds(const tensorflow::Features& features, std::vector<int64_t>* ids);

  const TfRecordSource spec_;
  const int64_t buckets_;
  // Values per dense feature, from the first record; empty before it.
  std::vector<int64_t> dense_widths_;
  bool one_id_per_field_ = true;
  // Reused from record to record.
  tensorflow::Example example_;
  std::vector<float> label_values_;
  std::vector<int64_t> ids_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TF_EXAMPLE_DECODER_H_
