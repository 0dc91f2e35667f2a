#include "common/model/plugin_model_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/plugin_model_api.h"

namespace pstrain {
namespace {

// Owns the library handle; closes it when the last user goes.
class LibraryHandle {
 public:
  explicit LibraryHandle(void* handle) : handle_(handle) {}
  ~LibraryHandle() { dlclose(handle_); }
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;
  void* get() const { return handle_; }

 private:
  void* const handle_;
};

// A plug-in's model and the library its code lives in. Forwards every call;
// destroys the model before the library is unloaded.
class PluginModel : public Model {
 public:
  PluginModel(std::unique_ptr<LibraryHandle> library, Model* model)
      : library_(std::move(library)), model_(model) {}
  ~PluginModel() override { delete model_; }

  std::string name() const override { return model_->name(); }
  std::vector<VariableDef> Variables() const override { return model_->Variables(); }
  PredictionKind prediction_kind() const override { return model_->prediction_kind(); }
  int64_t prediction_width() const override { return model_->prediction_width(); }
  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override {
    return model_->RowsToRead(batch);
  }
  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override {
    return model_->Forward(parameters, batch, mode, output);
  }
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override {
    return model_->ComputeGradients(parameters, batch, output, gradients);
  }
  absl::Status DescribeOnnx(OnnxGraph& graph) const override { return model_->DescribeOnnx(graph); }

 private:
  // Declared first so it is destroyed last.
  const std::unique_ptr<LibraryHandle> library_;
  Model* const model_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> LoadPluginModel(const std::string& library_path,
                                                       const std::string& config,
                                                       const ModelContext& context) {
  struct stat info;
  if (library_path.empty() || stat(library_path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat("plug-in model library ", library_path, ": no such file"));
  }
  // RTLD_LOCAL: two plug-ins may define the same names. The host exports
  // its own symbols (-rdynamic), so a plug-in's copies of pstrain's code
  // bind to the host's and protobuf descriptors are registered once.
  void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("plug-in model library ", library_path, " cannot be loaded: ", dlerror()));
  }
  auto library = std::make_unique<LibraryHandle>(handle);
  dlerror();
  auto entry = reinterpret_cast<ModelPluginEntryPoint>(dlsym(handle, kModelPluginEntryPoint));
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plug-in model library ", library_path, " does not export ", kModelPluginEntryPoint,
        " (define it with PSTRAIN_DEFINE_MODEL_PLUGIN from common/model/plugin_model_api.h)"));
  }
  Model* model = nullptr;
  uint32_t plugin_version = 0;
  char error[1024] = {0};
  const int result = entry(kModelPluginAbiVersion, config.data(), config.size(), &context, &model,
                           &plugin_version, error, sizeof(error));
  switch (result) {
    case kModelPluginOk:
      if (model == nullptr) break;
      return std::unique_ptr<Model>(new PluginModel(std::move(library), model));
    case kModelPluginWrongAbiVersion:
      return absl::FailedPreconditionError(absl::StrCat(
          "plug-in model library ", library_path, " was built for plug-in ABI version ",
          plugin_version, "; this program has version ", kModelPluginAbiVersion,
          ". Rebuild it against this pstrain"));
    case kModelPluginError:
      return absl::InvalidArgumentError(absl::StrCat("plug-in model library ", library_path,
                                                     " refused config \"", config, "\": ", error));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("plug-in model library ", library_path, " returned ", result, " and no model"));
}

}  // namespace pstrain
