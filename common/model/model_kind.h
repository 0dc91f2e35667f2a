#ifndef PSTRAIN_COMMON_MODEL_MODEL_KIND_H_
#define PSTRAIN_COMMON_MODEL_MODEL_KIND_H_

// What each model kind of a ModelSpec needs of its data and holds on the
// parameter servers, declared once, in one table row per kind: job spec
// defaults and validation and the coordinator's admission read it instead of
// listing kinds by name. A new kind adds its row in model_kind.cc; how it is
// built is its case in model_factory.cc.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/job.pb.h"

namespace pstrain {

// A dynamic embedding table of a spec (any 64-bit id gets a row) that has no
// budget (max_bytes_per_shard 0) of its own.
struct UnbudgetedTable {
  // The spec field that declares it: "model.wide_and_deep.embedding".
  std::string path;
  // Sets its max_bytes_per_shard in the spec it was found in.
  std::function<void(int64_t bytes)> set_budget;
};

struct ModelKind {
  ModelSpec::KindCase kind;
  // The kind's field in a ModelSpec, as a spec writes it: "wide_and_deep".
  absl::string_view name;
  // It reads images (data whose DataFormat has `images`).
  bool needs_images;
  // It reads sparse ids (data whose DataFormat carries_ids).
  bool needs_ids;
  // The metric evaluation reports beside the loss by default: "accuracy"
  // for a classifier, "mse" for a regression; empty when the spec does not
  // say what the model predicts (a plug-in).
  absl::string_view (*quality_metric)(const ModelSpec& model);
  // Its dynamic tables without a budget, in `model` (which outlives the
  // result); null for kinds without dynamic tables. One entry may stand for
  // several tables that share one EmbeddingSpec (dlrm's per-field tables):
  // each gets the budget. A plug-in's tables are
  // declared by the plug-in itself, not by its spec, so it has none here.
  std::vector<UnbudgetedTable> (*unbudgeted_tables)(ModelSpec* model);
};

// Every kind, in the order of ModelSpec's `kind` fields. Constant.
absl::Span<const ModelKind> ModelKinds();

// The row of `kind`; null for KIND_NOT_SET or a kind this build does not
// know.
const ModelKind* ModelKindOf(ModelSpec::KindCase kind);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_MODEL_KIND_H_
