// A test plug-in: config "ok" gives a small linear regression, anything else
// is refused.

#include "common/model/builtin/linear_model.h"
#include "common/model/plugin_model_api.h"

namespace {

absl::StatusOr<std::unique_ptr<pstrain::Model>> Create(const std::string& config,
                                                       const pstrain::ModelContext& context) {
  if (config != "ok") return absl::InvalidArgumentError("config must be \"ok\"");
  pstrain::LinearModelOptions options;
  options.input_dim = 3;
  auto model = pstrain::LinearModel::Create(options, context);
  if (!model.ok()) return model.status();
  return std::unique_ptr<pstrain::Model>(std::move(model).value());
}

}  // namespace

PSTRAIN_DEFINE_MODEL_PLUGIN(Create)
