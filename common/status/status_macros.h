#ifndef PSTRAIN_COMMON_STATUS_STATUS_MACROS_H_
#define PSTRAIN_COMMON_STATUS_STATUS_MACROS_H_

// Early-return helpers for absl::Status and absl::StatusOr. The Debian
// Abseil (20220623) does not ship its own.
//
//   RETURN_IF_ERROR(file.Sync());
//   ASSIGN_OR_RETURN(std::unique_ptr<Shard> shard, Shard::Create(options));

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) once; returns it from the enclosing
// function if it is not OK.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status pstrain_status_macro_status = (expr); \
    if (!pstrain_status_macro_status.ok()) {             \
      return pstrain_status_macro_status;                \
    }                                                    \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>) once; returns its status if it is
// not OK, otherwise moves its value into `lhs`, which may be a declaration.
#define ASSIGN_OR_RETURN(lhs, rexpr)                                                           \
  PSTRAIN_ASSIGN_OR_RETURN_IMPL(PSTRAIN_STATUS_MACRO_CONCAT(pstrain_statusor_, __LINE__), lhs, \
                                rexpr)

#define PSTRAIN_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) {                                     \
    return std::move(statusor).status();                    \
  }                                                         \
  lhs = std::move(statusor).value()

#define PSTRAIN_STATUS_MACRO_CONCAT_INNER(x, y) x##y
#define PSTRAIN_STATUS_MACRO_CONCAT(x, y) PSTRAIN_STATUS_MACRO_CONCAT_INNER(x, y)

#endif  // PSTRAIN_COMMON_STATUS_STATUS_MACROS_H_
