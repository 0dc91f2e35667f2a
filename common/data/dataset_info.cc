#include "common/data/dataset_info.h"

#include "absl/strings/str_cat.h"

namespace pstrain {

std::string DatasetInfo::DebugString() const {
  std::string out = absl::StrCat(num_examples, " examples");
  if (dense_dim > 0) {
    absl::StrAppend(&out, ", ", dense_dim, " dense");
    if (image_height > 0) {
      absl::StrAppend(&out, " (", image_height, "x", image_width, "x", image_channels, ")");
    }
  }
  if (sparse_dim > 0) {
    absl::StrAppend(&out, ", sparse ids < ", sparse_dim);
    if (num_fields > 0) absl::StrAppend(&out, " in ", num_fields, " fields");
  }
  if (num_classes > 0) {
    absl::StrAppend(&out, ", ", num_classes, " classes");
  } else {
    absl::StrAppend(&out, ", real-valued labels");
  }
  return out;
}

}  // namespace pstrain
