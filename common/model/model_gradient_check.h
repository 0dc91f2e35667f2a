#ifndef PSTRAIN_COMMON_MODEL_MODEL_GRADIENT_CHECK_H_
#define PSTRAIN_COMMON_MODEL_MODEL_GRADIENT_CHECK_H_

// Test helpers: parameters for a model built from its own declarations, and
// a check of its gradients against central differences of its loss.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/example_batch.h"
#include "common/model/model.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {

// Every variable of a model, initialised from its declaration: dense ones
// whole, embedding tables as the rows a given batch reads.
class TestParameters {
 public:
  // InvalidArgument: a declaration that cannot be initialised.
  static absl::StatusOr<std::unique_ptr<TestParameters>> Create(const Model& model,
                                                                const ExampleBatch& batch);

  const ParameterView& view() const { return view_; }
  Tensor* dense(const std::string& name) { return dense_.at(name).get(); }
  EmbeddingRows* rows(const std::string& name) { return rows_.at(name).get(); }

  // Every trainable value buffer with its name, for perturbation.
  std::vector<std::pair<std::string, Tensor*>> TrainableTensors();

 private:
  std::vector<VariableDef> defs_;
  absl::flat_hash_map<std::string, std::unique_ptr<Tensor>> dense_;
  absl::flat_hash_map<std::string, std::unique_ptr<EmbeddingRows>> rows_;
  ParameterView view_;
};

// Compares model->ComputeGradients on `batch` with central differences of
// the eval-mode loss for up to `max_per_variable` elements of every
// trainable variable (spread over the variable). The model must have no
// dropout. Fails naming the variable and elements that differ.
::testing::AssertionResult ModelGradientsMatch(Model* model, const ExampleBatch& batch,
                                               int max_per_variable = 24, double step = 1e-2,
                                               double atol = 2e-3, double rtol = 3e-2);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_MODEL_GRADIENT_CHECK_H_
