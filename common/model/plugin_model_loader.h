#ifndef PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_LOADER_H_
#define PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/model/model.h"

namespace pstrain {

// Loads the shared library at `library_path` (dlopen), and creates its model
// from `config` through its entry point (see plugin_model_api.h). The
// returned model keeps the library loaded for as long as it lives.
//
// Errors, each naming the library:
//   NotFound: no file at library_path.
//   InvalidArgument: the file is not a loadable shared library (with the
//     loader's reason), it does not export pstrain_create_model, or its
//     factory refused `config` (with the plug-in's message).
//   FailedPrecondition: the library was built for another plug-in ABI
//     version than this program's.
absl::StatusOr<std::unique_ptr<Model>> LoadPluginModel(const std::string& library_path,
                                                       const std::string& config,
                                                       const ModelContext& context);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_PLUGIN_MODEL_LOADER_H_
