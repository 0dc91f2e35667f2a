#include "common/model/dnnl/dnnl_status.h"

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::Status DnnlErrorToStatus(const dnnl::error& error, absl::string_view what) {
  const std::string message = absl::StrCat("oneDNN ", what, ": ", error.what());
  switch (error.status) {
    case dnnl_invalid_arguments:
      return absl::InvalidArgumentError(message);
    case dnnl_unimplemented:
      return absl::UnimplementedError(message);
    case dnnl_out_of_memory:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace pstrain
