#ifndef PSTRAIN_COMMON_MODEL_DNNL_DNNL_STATUS_H_
#define PSTRAIN_COMMON_MODEL_DNNL_DNNL_STATUS_H_

// The one place where oneDNN's exceptions are caught: every call into the
// oneDNN C++ API goes through CallDnnl, so no dnnl::error leaves this library.

#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

// Maps a oneDNN status to the code a caller should act on: InvalidArgument
// for bad arguments, Unimplemented for a shape or layout no implementation
// supports, ResourceExhausted for out of memory, Internal otherwise.
absl::Status DnnlErrorToStatus(const dnnl::error& error, absl::string_view what);

// Runs `fn` and returns OK, or the status for the dnnl::error it threw, with
// `what` (e.g. "inner product forward") in the message.
template <typename Fn>
absl::Status CallDnnl(absl::string_view what, Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const dnnl::error& error) {
    return DnnlErrorToStatus(error, what);
  }
  return absl::OkStatus();
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_DNNL_DNNL_STATUS_H_
