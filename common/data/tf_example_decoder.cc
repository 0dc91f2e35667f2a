#include "common/data/tf_example_decoder.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status Problem(absl::string_view feature, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("feature '", feature, "' ", reason));
}

const tensorflow::Feature* Find(const tensorflow::Features& features, const std::string& name) {
  auto it = features.feature().find(name);
  return it == features.feature().end() ? nullptr : &it->second;
}

const char* KindOf(const tensorflow::Feature& feature) {
  switch (feature.kind_case()) {
    case tensorflow::Feature::kBytesList:
      return "a bytes_list";
    case tensorflow::Feature::kFloatList:
      return "a float_list";
    case tensorflow::Feature::kInt64List:
      return "an int64_list";
    case tensorflow::Feature::KIND_NOT_SET:
      break;
  }
  return "empty (no value list)";
}

// Appends a float_list's or int64_list's values to *out as floats; false
// (appending nothing) for other kinds.
bool AppendNumbers(const tensorflow::Feature& feature, std::vector<float>* out) {
  if (feature.has_float_list()) {
    const auto& values = feature.float_list().value();
    const size_t at = out->size();
    out->resize(at + values.size());
    if (!values.empty())
      std::memcpy(out->data() + at, values.data(), values.size() * sizeof(float));
    return true;
  }
  if (feature.has_int64_list()) {
    for (int64_t v : feature.int64_list().value()) out->push_back(static_cast<float>(v));
    return true;
  }
  return false;
}

}  // namespace

TfExampleDecoder::TfExampleDecoder(const TfRecordSource& spec)
    : spec_(spec), buckets_(HashBucketsOf(spec)) {}

absl::Status TfExampleDecoder::AppendDense(const tensorflow::Features& features,
                                           std::vector<float>* dense) {
  std::vector<int64_t> widths;
  for (const std::string& name : spec_.dense_features()) {
    const tensorflow::Feature* feature = Find(features, name);
    if (feature == nullptr) {
      return Problem(name, "is missing; a dense feature must be in every record");
    }
    const size_t begin = dense->size();
    if (!AppendNumbers(*feature, dense)) {
      return Problem(name, absl::StrCat("is ", KindOf(*feature),
                                        "; a dense feature is a float_list or an int64_list"));
    }
    const int64_t width = static_cast<int64_t>(dense->size() - begin);
    const size_t index = widths.size();
    if (index < dense_widths_.size() && dense_widths_[index] != width) {
      return Problem(name,
                     absl::StrCat("holds ", width, " values; the data set's first record held ",
                                  dense_widths_[index]));
    }
    for (auto v = dense->begin() + begin; v != dense->end(); ++v) {
      if (!std::isfinite(*v))
        return Problem(name, absl::StrCat("holds ", *v, ", not a finite value"));
    }
    widths.push_back(width);
  }
  if (dense_widths_.empty()) dense_widths_ = std::move(widths);
  return absl::OkStatus();
}

absl::Status TfExampleDecoder::AppendIds(const tensorflow::Features& features,
                                         std::vector<int64_t>* ids) {
  bool one_each = true;
  for (const std::string& name : spec_.sparse_features()) {
    const tensorflow::Feature* feature = Find(features, name);
    const size_t before = ids->size();
    if (feature == nullptr) {
      // A categorical feature may have no value in a record.
    } else if (feature->has_int64_list()) {
      for (int64_t v : feature->int64_list().value()) {
        ids->push_back(CategoricalId(name, v, buckets_));
      }
    } else if (feature->has_bytes_list()) {
      for (const std::string& v : feature->bytes_list().value()) {
        ids->push_back(CategoricalId(name, v, buckets_));
      }
    } else if (feature->has_float_list()) {
      return Problem(name,
                     "is a float_list; a categorical feature is an int64_list or a "
                     "bytes_list");
    }
    one_each = one_each && ids->size() == before + 1;
  }
  one_id_per_field_ = one_id_per_field_ && one_each;
  return absl::OkStatus();
}

absl::Status TfExampleDecoder::Append(absl::string_view record,
                                      InMemorySource::Examples* examples) {
  if (!example_.ParseFromArray(record.data(), static_cast<int>(record.size()))) {
    return absl::InvalidArgumentError("does not parse as a tf.Example");
  }
  const tensorflow::Features& features = example_.features();
  const std::string& label_name = spec_.label();
  const tensorflow::Feature* label = Find(features, label_name);
  if (label == nullptr) return Problem(label_name, "(the label) is missing");
  label_values_.clear();
  if (!AppendNumbers(*label, &label_values_)) {
    return Problem(label_name, absl::StrCat("(the label) is ", KindOf(*label),
                                            "; a label is a float_list or an int64_list"));
  }
  if (label_values_.size() != 1 || !std::isfinite(label_values_[0])) {
    return Problem(
        label_name,
        label_values_.size() != 1
            ? absl::StrCat("(the label) holds ", label_values_.size(), " values, not one")
            : absl::StrCat("(the label) is ", label_values_[0], ", not a finite value"));
  }
  // Decoded straight into *examples, and taken back on error.
  const size_t dense_before = examples->dense_floats.size();
  absl::Status dense = AppendDense(features, &examples->dense_floats);
  ids_.clear();
  if (dense.ok()) dense = AppendIds(features, &ids_);
  if (!dense.ok()) {
    examples->dense_floats.resize(dense_before);
    return dense;
  }
  if (examples->num_examples == 0) {
    examples->dense_dim = static_cast<int64_t>(examples->dense_floats.size() - dense_before);
  }
  if (!spec_.sparse_features().empty()) {
    if (examples->row_splits.empty()) examples->row_splits.push_back(0);
    examples->sparse_ids.insert(examples->sparse_ids.end(), ids_.begin(), ids_.end());
    examples->row_splits.push_back(static_cast<int64_t>(examples->sparse_ids.size()));
  }
  examples->labels.push_back(label_values_[0]);
  ++examples->num_examples;
  return absl::OkStatus();
}

void TfExampleDecoder::Finish(InMemorySource::Examples* examples) const {
  if (spec_.sparse_features().empty()) return;
  examples->sparse_dim = buckets_;
  examples->num_fields = one_id_per_field_ ? spec_.sparse_features_size() : 0;
}

}  // namespace pstrain
