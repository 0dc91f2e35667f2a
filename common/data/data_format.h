#ifndef PSTRAIN_COMMON_DATA_DATA_FORMAT_H_
#define PSTRAIN_COMMON_DATA_DATA_FORMAT_H_

// What each data source of a DataSpec is and what it can give a model,
// declared once, in one table row per source: job spec validation, the
// coordinator, `pstrain predict` and `pstrain index-data` read it instead of
// listing sources by name. A new source adds its row in data_format.cc.

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "absl/strings/string_view.h"
#include "protos/job.pb.h"

namespace pstrain {

struct DataFormat {
  DataSpec::SourceCase source;
  // The source's field in a DataSpec, as a spec writes it: "fashion_mnist".
  absl::string_view name;
  // Read from files a block of records at a time through an offset index
  // (read_mode STREAMED, `pstrain index-data`, record_format.h); the other
  // sources are held in memory.
  bool streams;
  // Its examples carry an image layout (height x width x channels), which
  // a convolutional model needs.
  bool images;
  // Whether the examples of `data` (a spec of this source) carry sparse ids,
  // which a model with embedding tables needs.
  bool (*carries_ids)(const DataSpec& data);
  // When carries_ids depends on the spec, what it takes, for errors:
  // "tfrecord with sparse_features". Empty otherwise.
  absl::string_view ids_condition;
  // `pstrain predict --input_format`: the name of the format there ("idx"
  // for Fashion-MNIST's IDX files), empty if predict cannot read it.
  absl::string_view predict_name;
  // Whether a file's name says it is of this format, for `pstrain predict`
  // without --input_format; null when names say nothing (Criteo).
  bool (*named_like)(absl::string_view file_name);
};

// Every source, in the order of DataSpec's `source` fields. Constant.
absl::Span<const DataFormat> DataFormats();

// The row of `source`; null for SOURCE_NOT_SET or a source this build does
// not know.
const DataFormat* DataFormatOf(DataSpec::SourceCase source);

// The names of the formats `pick` selects, in table order.
std::vector<absl::string_view> DataFormatNames(bool (*pick)(const DataFormat& format));

// "a", "a or b", "a, b, or c" (`conjunction` "or"; "and" likewise).
std::string JoinNames(absl::Span<const absl::string_view> names, absl::string_view conjunction);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_DATA_FORMAT_H_
