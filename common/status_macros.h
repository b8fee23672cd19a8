#ifndef ACCEL_COMMON_STATUS_MACROS_H_
#define ACCEL_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Abseil 20220623 ships no RETURN_IF_ERROR-style macros; these are the usual two.

// Evaluates `expr` (an absl::Status) and returns it from the calling function if not OK.
#define ACCEL_RETURN_IF_ERROR(expr)                  \
  do {                                               \
    ::absl::Status accel_status_ = (expr);           \
    if (!accel_status_.ok()) return accel_status_;   \
  } while (0)

#define ACCEL_STATUS_CONCAT_INNER_(a, b) a##b
#define ACCEL_STATUS_CONCAT_(a, b) ACCEL_STATUS_CONCAT_INNER_(a, b)

// `lhs = value of expr` where expr is an absl::StatusOr<T>; returns its status if not OK.
#define ACCEL_ASSIGN_OR_RETURN(lhs, expr) \
  ACCEL_ASSIGN_OR_RETURN_IMPL_(ACCEL_STATUS_CONCAT_(accel_statusor_, __LINE__), lhs, expr)
#define ACCEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#endif  // ACCEL_COMMON_STATUS_MACROS_H_
