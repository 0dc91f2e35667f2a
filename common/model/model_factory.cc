#include "common/model/model_factory.h"

#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_validation.h"
#include "common/model/builtin/cnn_model.h"
#include "common/model/builtin/dlrm_model.h"
#include "common/model/builtin/linear_model.h"
#include "common/model/builtin/mlp_model.h"
#include "common/model/builtin/wide_and_deep_model.h"
#include "common/model/label_fit.h"
#include "common/model/onnx/onnx_model.h"
#include "common/model/plugin_model_loader.h"
#include "common/model/standardized_input_model.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// `value` if set (> 0), else the data's; InvalidArgument when they disagree
// or neither is known.
absl::StatusOr<int64_t> Resolve(absl::string_view field, int64_t value, int64_t from_data) {
  if (value > 0) {
    if (from_data > 0 && value != from_data) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " is ", value, " but the training data has ", from_data));
    }
    return value;
  }
  if (value < 0) return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 0"));
  if (from_data <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is 0 (from the data) but the training data does not give it"));
  }
  return from_data;
}

absl::StatusOr<std::unique_ptr<Model>> CreateLinear(PredictionKind kind, int32_t num_classes,
                                                    int64_t input_dim, absl::string_view field,
                                                    const DatasetInfo& info,
                                                    const ModelContext& context) {
  LinearModelOptions options;
  options.kind = kind;
  options.num_classes = num_classes;
  // Dense features when the data has them; its sparse ids otherwise.
  options.sparse_input = info.dense_dim == 0 && info.sparse_dim > 0;
  absl::StatusOr<int64_t> dim = Resolve(absl::StrCat(field, ".input_dim"), input_dim,
                                        options.sparse_input ? info.sparse_dim : info.dense_dim);
  if (!dim.ok()) return dim.status();
  options.input_dim = *dim;
  absl::StatusOr<std::unique_ptr<LinearModel>> model = LinearModel::Create(options, context);
  if (!model.ok()) return model.status();
  return std::unique_ptr<Model>(std::move(model).value());
}

// Resolve for a class count: its errors also say which label of the data
// decided it, and where that label is.
absl::StatusOr<int64_t> ResolveClasses(absl::string_view field, int64_t value,
                                       const DatasetInfo& info) {
  absl::StatusOr<int64_t> classes = Resolve(field, value, info.num_classes);
  if (classes.ok()) return classes;
  const LabelPlaces& places = info.label_places;
  if (info.num_classes > 0 && places.largest.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(classes.status().message(), " classes: its largest label is ",
                     places.largest->label, " (", places.largest->where, ")"));
  }
  if (info.num_classes == 0 && places.first_non_class.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field,
        " is 0 (from the data), but the training data's labels are not all class ids "
        "(integers from 0): label ",
        places.first_non_class->label, " (", places.first_non_class->where,
        "); set it, or train a regression (mlp's regression: true, linear_regression)"));
  }
  return classes;
}

// Wraps a kind's own StatusOr<unique_ptr<Kind>>.
template <typename Kind>
absl::StatusOr<std::unique_ptr<Model>> AsModel(absl::StatusOr<std::unique_ptr<Kind>> model) {
  if (!model.ok()) return model.status();
  return std::unique_ptr<Model>(std::move(model).value());
}

absl::Status ResolveMlp(const DatasetInfo& info, MlpSpec* mlp) {
  ASSIGN_OR_RETURN(const int64_t input,
                   Resolve("model.mlp.input_dim", mlp->input_dim(), info.dense_dim));
  mlp->set_input_dim(input);
  if (mlp->regression()) return absl::OkStatus();  // one output, whatever the labels
  ASSIGN_OR_RETURN(const int64_t classes,
                   ResolveClasses("model.mlp.num_classes", mlp->num_classes(), info));
  mlp->set_num_classes(static_cast<int32_t>(classes));
  return absl::OkStatus();
}

absl::Status ResolveCnn(const DatasetInfo& info, CnnSpec* cnn) {
  ASSIGN_OR_RETURN(const int64_t classes,
                   ResolveClasses("model.cnn.num_classes", cnn->num_classes(), info));
  cnn->set_num_classes(static_cast<int32_t>(classes));
  if (info.image_height <= 0 || info.image_width <= 0 || info.image_channels <= 0) {
    return absl::InvalidArgumentError(
        "model.cnn needs image data (height x width x channels); the training data has none");
  }
  return absl::OkStatus();
}

absl::Status ResolveWideAndDeep(const DatasetInfo& info, WideAndDeepSpec* wide_and_deep) {
  if (info.sparse_dim <= 0) {
    return absl::InvalidArgumentError(
        "model.wide_and_deep needs sparse ids; the training data has none");
  }
  if (wide_and_deep->num_fields() == 0) wide_and_deep->set_num_fields(info.num_fields);
  if (info.num_fields > 0 && wide_and_deep->num_fields() != info.num_fields) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.wide_and_deep.num_fields is ", wide_and_deep->num_fields(),
                     " but the training data has ", info.num_fields));
  }
  if (wide_and_deep->dense_dim() == 0) wide_and_deep->set_dense_dim(info.dense_dim);
  if (wide_and_deep->dense_dim() != info.dense_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.wide_and_deep.dense_dim is ", wide_and_deep->dense_dim(),
                     " but the training data has ", info.dense_dim, " dense features"));
  }
  return absl::OkStatus();
}

absl::Status ResolveDlrm(const DatasetInfo& info, DlrmSpec* dlrm) {
  if (info.sparse_dim <= 0) {
    return absl::InvalidArgumentError("model.dlrm needs sparse ids; the training data has none");
  }
  if (info.num_fields <= 0) {
    return absl::InvalidArgumentError(
        "model.dlrm needs one id per field (model.dlrm.num_fields); the training data's "
        "examples have varying numbers of ids");
  }
  ASSIGN_OR_RETURN(const int64_t fields,
                   Resolve("model.dlrm.num_fields", dlrm->num_fields(), info.num_fields));
  dlrm->set_num_fields(static_cast<int32_t>(fields));
  if (info.dense_dim <= 0) {
    return absl::InvalidArgumentError(
        "model.dlrm needs dense features for its bottom MLP (model.dlrm.dense_dim); the "
        "training data has none");
  }
  ASSIGN_OR_RETURN(const int64_t dense,
                   Resolve("model.dlrm.dense_dim", dlrm->dense_dim(), info.dense_dim));
  dlrm->set_dense_dim(static_cast<int32_t>(dense));
  return absl::OkStatus();
}

// Sets the dimensions `spec` leaves to the data from `info`.
absl::Status ResolveFromData(const DatasetInfo& info, ModelSpec* spec) {
  switch (spec->kind_case()) {
    case ModelSpec::kMlp:
      return ResolveMlp(info, spec->mutable_mlp());
    case ModelSpec::kLogisticRegression: {
      LogisticRegressionSpec* lr = spec->mutable_logistic_regression();
      ASSIGN_OR_RETURN(
          const int64_t classes,
          ResolveClasses("model.logistic_regression.num_classes", lr->num_classes(), info));
      lr->set_num_classes(static_cast<int32_t>(classes));
      return absl::OkStatus();
    }
    case ModelSpec::kCnn:
      return ResolveCnn(info, spec->mutable_cnn());
    case ModelSpec::kWideAndDeep:
      return ResolveWideAndDeep(info, spec->mutable_wide_and_deep());
    case ModelSpec::kDlrm:
      return ResolveDlrm(info, spec->mutable_dlrm());
    default:  // the linear input width is resolved with its kind of input; the rest read files
      return absl::OkStatus();
  }
}

// Builds the model of `spec`, filled, resolved and valid.
absl::StatusOr<std::unique_ptr<Model>> Build(const ModelSpec& spec, const DatasetInfo& info,
                                             const ModelContext& context) {
  switch (spec.kind_case()) {
    case ModelSpec::kMlp:
      return AsModel(MlpModel::Create(spec.mlp(), context));
    case ModelSpec::kLogisticRegression: {
      const LogisticRegressionSpec& lr = spec.logistic_regression();
      return CreateLinear(lr.num_classes() == 2 ? PredictionKind::kBinaryProbability
                                                : PredictionKind::kClassProbabilities,
                          lr.num_classes(), lr.input_dim(), "model.logistic_regression", info,
                          context);
    }
    case ModelSpec::kLinearRegression:
      return CreateLinear(PredictionKind::kRegression, 0, spec.linear_regression().input_dim(),
                          "model.linear_regression", info, context);
    case ModelSpec::kCnn: {
      const CnnImage image{info.image_height, info.image_width, info.image_channels};
      return AsModel(CnnModel::Create(spec.cnn(), image, context));
    }
    case ModelSpec::kWideAndDeep:
      return AsModel(WideAndDeepModel::Create(spec.wide_and_deep(), context));
    case ModelSpec::kPlugin:
      return LoadPluginModel(spec.plugin().library_path(), spec.plugin().config(), context);
    case ModelSpec::kOnnx:
      return AsModel(OnnxModel::Create(spec.onnx(), info, context));
    case ModelSpec::kDlrm:
      return AsModel(DlrmModel::Create(spec.dlrm(), context));
    case ModelSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("model names no model kind");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> CreateModel(const ModelSpec& raw, const DatasetInfo& info,
                                                   const ModelContext& context) {
  if (context.compute == nullptr) {
    return absl::InvalidArgumentError("a model needs a compute context");
  }
  if (raw.kind_case() == ModelSpec::KIND_NOT_SET) {
    return absl::InvalidArgumentError("model names no model kind");
  }
  ModelSpec spec = raw;
  FillModelDefaults(&spec);
  RETURN_IF_ERROR(ResolveFromData(info, &spec));
  // After resolving: a dimension from the data obeys the spec's rules too
  // (data of one class cannot train a classifier).
  RETURN_IF_ERROR(ValidateModelSpec(spec));
  ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Build(spec, info, context));
  RETURN_IF_ERROR(CheckLabelsFit(*model, info, "the training data"));
  if (info.dense_mean.empty()) return model;
  return std::unique_ptr<Model>(
      new StandardizedInputModel(std::move(model), info.dense_mean, info.dense_scale));
}

}  // namespace pstrain
