#ifndef PSTRAIN_COMMON_DATA_DATASET_INFO_H_
#define PSTRAIN_COMMON_DATA_DATASET_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/data/label_places.h"

namespace pstrain {

// What a data source holds, so a model can size itself when its spec leaves
// a dimension at 0 ("from the training data"). A value type.
struct DatasetInfo {
  int64_t num_examples = 0;

  // Dense features per example; 0 when there are none.
  int64_t dense_dim = 0;
  // The image layout of the dense features (height * width * channels ==
  // dense_dim), or all 0 when they are not an image.
  int64_t image_height = 0;
  int64_t image_width = 0;
  int64_t image_channels = 0;

  // Sparse feature ids lie in [0, sparse_dim); 0 when there are none.
  int64_t sparse_dim = 0;
  // Sparse ids per example when every example has the same number (one per
  // categorical field); 0 when it varies.
  int32_t num_fields = 0;

  // Number of classes when every label is a non-negative integer: the
  // largest label + 1 (at least 2). 0 when some label is not (a regression
  // target).
  int32_t num_classes = 0;

  // The dense features' names, in order, when the data names them (a CSV
  // header); else empty.
  std::vector<std::string> dense_names;
  // The value each dense feature takes when its field is missing (a CSV's
  // fill_missing), NaN where a missing one is refused; empty when the data
  // has no such notion. The exported model.onnx applies it to NaN inputs.
  std::vector<float> dense_fill;
  // The standardisation the model applies to the dense features it reads,
  // (x - dense_mean) * dense_scale, from this data (csv.standardize):
  // empty when there is none.
  std::vector<float> dense_mean;
  std::vector<float> dense_scale;

  // Where the labels that decide num_classes were read, when the reader
  // knows (data held in memory from CSV, libsvm or TFRecord files).
  LabelPlaces label_places;

  // "60000 examples, 784 dense (28x28x1), 10 classes": for logs.
  std::string DebugString() const;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_DATASET_INFO_H_
