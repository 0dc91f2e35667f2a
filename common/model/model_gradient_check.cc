#include "common/model/model_gradient_check.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/optimizer/initializer.h"

namespace pstrain {
namespace testing_util {

absl::StatusOr<std::unique_ptr<TestParameters>> TestParameters::Create(const Model& model,
                                                                       const ExampleBatch& batch) {
  auto params = std::make_unique<TestParameters>();
  params->defs_ = model.Variables();
  absl::StatusOr<RowIds> row_ids = model.RowsToRead(batch);
  if (!row_ids.ok()) return row_ids.status();
  for (const VariableDef& def : params->defs_) {
    const VariableSpec& spec = def.spec;
    absl::StatusOr<Initializer> init = Initializer::ForVariable(spec, /*job_seed=*/0);
    if (!init.ok()) return init.status();
    if (spec.kind() == VARIABLE_KIND_EMBEDDING) {
      auto rows = std::make_unique<EmbeddingRows>();
      rows->ids = (*row_ids)[spec.name()];
      const int64_t dim = spec.shape().dims(1);
      absl::StatusOr<Tensor> values =
          Tensor::Create(DATA_TYPE_FLOAT32, Shape({static_cast<int64_t>(rows->ids.size()), dim}));
      if (!values.ok()) return values.status();
      rows->values = std::move(values).value();
      for (size_t r = 0; r < rows->ids.size(); ++r) {
        init->FillRow(rows->ids[r], absl::MakeSpan(rows->values.data<float>() + r * dim, dim));
      }
      params->view_.rows[spec.name()] = rows.get();
      params->rows_[spec.name()] = std::move(rows);
    } else {
      absl::StatusOr<Shape> shape = Shape::FromProto(spec.shape());
      if (!shape.ok()) return shape.status();
      absl::StatusOr<Tensor> tensor = Tensor::Create(DATA_TYPE_FLOAT32, *shape);
      if (!tensor.ok()) return tensor.status();
      auto owned = std::make_unique<Tensor>(std::move(tensor).value());
      init->FillDense(0, absl::MakeSpan(owned->data<float>(), owned->num_elements()));
      params->view_.dense[spec.name()] = owned.get();
      params->dense_[spec.name()] = std::move(owned);
    }
  }
  return params;
}

std::vector<std::pair<std::string, Tensor*>> TestParameters::TrainableTensors() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (const VariableDef& def : defs_) {
    if (!def.trainable) continue;
    const std::string& name = def.spec.name();
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
      out.emplace_back(name, &rows_.at(name)->values);
    } else {
      out.emplace_back(name, dense_.at(name).get());
    }
  }
  return out;
}

::testing::AssertionResult ModelGradientsMatch(Model* model, const ExampleBatch& batch,
                                               int max_per_variable, double step, double atol,
                                               double rtol) {
  auto params = TestParameters::Create(*model, batch);
  if (!params.ok()) return ::testing::AssertionFailure() << params.status();
  // Biases start at zero; random values exercise them better.
  for (auto& [name, tensor] : (*params)->TrainableTensors()) {
    float* v = tensor->data<float>();
    for (int64_t i = 0; i < tensor->num_elements(); ++i) {
      v[i] += 0.05f * static_cast<float>(std::sin(1.7 * i + name.size()));
    }
  }
  ModelOutput output;
  Gradients gradients;
  absl::Status status = model->ComputeGradients((*params)->view(), batch, &output, &gradients);
  if (!status.ok()) return ::testing::AssertionFailure() << status;
  auto loss = [&]() {
    ModelOutput eval;
    absl::Status s = model->Forward((*params)->view(), batch, PassMode::kEval, &eval);
    return s.ok() ? eval.loss : NAN;
  };
  std::string report;
  int mismatches = 0, checked = 0;
  for (auto& [name, tensor] : (*params)->TrainableTensors()) {
    const float* analytic = nullptr;
    auto dense = gradients.dense.find(name);
    auto rows = gradients.rows.find(name);
    if (dense != gradients.dense.end()) {
      if (dense->second.shape() != tensor->shape()) {
        return ::testing::AssertionFailure() << name << ": gradient shape differs";
      }
      analytic = dense->second.data<float>();
    } else if (rows != gradients.rows.end()) {
      const EmbeddingRows& read = *(*params)->view().rows.at(name);
      if (rows->second.ids != read.ids || rows->second.values.shape() != tensor->shape()) {
        return ::testing::AssertionFailure() << name << ": gradient rows differ from rows read";
      }
      analytic = rows->second.values.data<float>();
    } else {
      return ::testing::AssertionFailure() << "no gradient for " << name;
    }
    const int64_t n = tensor->num_elements();
    const int64_t stride = std::max<int64_t>(1, n / max_per_variable);
    float* values = tensor->data<float>();
    for (int64_t i = 0; i < n; i += stride) {
      const float saved = values[i];
      values[i] = static_cast<float>(saved + step);
      const double plus = loss();
      values[i] = static_cast<float>(saved - step);
      const double minus = loss();
      values[i] = saved;
      const double numeric = (plus - minus) / (2 * step);
      ++checked;
      if (!(std::abs(numeric - analytic[i]) <= atol + rtol * std::abs(numeric))) {
        if (++mismatches <= 8) {
          absl::StrAppend(&report, "\n  ", name, "[", i, "] analytic ", analytic[i], " numeric ",
                          numeric);
        }
      }
    }
  }
  if (checked == 0) return ::testing::AssertionFailure() << "no trainable variables";
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << checked << " gradient elements differ:" << report;
}

}  // namespace testing_util
}  // namespace pstrain
