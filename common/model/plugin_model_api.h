#ifndef PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_API_H_
#define PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_API_H_

// What a plug-in model library implements: a class derived from
// pstrain::Model, a factory creating it from a config string, and one line
//
//   PSTRAIN_DEFINE_MODEL_PLUGIN(CreateMyModel);
//
// where CreateMyModel has the signature of ModelPluginFactory. The macro
// exports the library's single entry point, pstrain_create_model, which
// checks the ABI version before anything else crosses the boundary. Build
// the library as a shared object against the same pstrain headers and
// compiler as the host, and name it in ModelSpec.plugin.library_path.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/model/model.h"

namespace pstrain {

// The version of everything that crosses the plug-in boundary: the Model
// interface and the types in its signatures. Bumped whenever any of them
// changes layout or meaning; a plug-in built for another version is refused.
// 2: Model::DescribeOnnx.
inline constexpr uint32_t kModelPluginAbiVersion = 2;

// The name of the entry point the loader looks up.
inline constexpr char kModelPluginEntryPoint[] = "pstrain_create_model";

// Codes the entry point returns.
enum ModelPluginResult : int {
  kModelPluginOk = 0,
  // The host's ABI version differs from the plug-in's; *plugin_abi_version
  // says which the plug-in was built for. No model was created.
  kModelPluginWrongAbiVersion = 1,
  // The factory failed; `error` holds its message. No model was created.
  kModelPluginError = 2,
};

// The factory a plug-in provides.
using ModelPluginFactory = absl::StatusOr<std::unique_ptr<Model>> (*)(const std::string& config,
                                                                      const ModelContext& context);

// The entry point's C signature. On kModelPluginOk *model owns a new Model
// (delete it through its virtual destructor while the library is loaded).
// The plug-in always writes its own version to *plugin_abi_version, and on
// an error a NUL-terminated message of at most error_capacity bytes to
// `error`.
extern "C" {
typedef int (*ModelPluginEntryPoint)(uint32_t host_abi_version, const char* config,
                                     size_t config_size, const ModelContext* context, Model** model,
                                     uint32_t* plugin_abi_version, char* error,
                                     size_t error_capacity);
}

namespace plugin_internal {

inline void CopyError(const std::string& message, char* error, size_t capacity) {
  if (capacity == 0) return;
  const size_t n = message.size() < capacity - 1 ? message.size() : capacity - 1;
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

// The body of the entry point, compiled into the plug-in.
inline int CreateModelForHost(ModelPluginFactory factory, uint32_t host_abi_version,
                              const char* config, size_t config_size, const ModelContext* context,
                              Model** model, uint32_t* plugin_abi_version, char* error,
                              size_t error_capacity) {
  *plugin_abi_version = kModelPluginAbiVersion;
  *model = nullptr;
  if (host_abi_version != kModelPluginAbiVersion) return kModelPluginWrongAbiVersion;
  absl::StatusOr<std::unique_ptr<Model>> created =
      factory(std::string(config, config_size), *context);
  if (!created.ok()) {
    CopyError(created.status().ToString(), error, error_capacity);
    return kModelPluginError;
  }
  if (*created == nullptr) {
    CopyError("the plug-in's factory returned no model", error, error_capacity);
    return kModelPluginError;
  }
  *model = created->release();
  return kModelPluginOk;
}

}  // namespace plugin_internal
}  // namespace pstrain

// Defines the exported entry point around `factory`, a ModelPluginFactory.
#define PSTRAIN_DEFINE_MODEL_PLUGIN(factory)                                                       \
  extern "C" __attribute__((visibility("default"))) int pstrain_create_model(                      \
      uint32_t host_abi_version, const char* config, size_t config_size,                           \
      const ::pstrain::ModelContext* context, ::pstrain::Model** model,                            \
      uint32_t* plugin_abi_version, char* error, size_t error_capacity) {                          \
    return ::pstrain::plugin_internal::CreateModelForHost(                                         \
        factory, host_abi_version, config, config_size, context, model, plugin_abi_version, error, \
        error_capacity);                                                                           \
  }

#endif  // PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_API_H_
