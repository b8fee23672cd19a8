// The LibTorch scalar type of a plan dtype: the executor's one mapping from accel.ir.Dtype.
#ifndef ACCEL_EXECUTOR_PLAN_DTYPE_H_
#define ACCEL_EXECUTOR_PLAN_DTYPE_H_

#include <c10/core/ScalarType.h>

#include "ir/plan.pb.h"

namespace accel::exec {

// kFloat, kBFloat16 or kHalf; `fallback` for DTYPE_UNSPECIFIED (a hand-built plan) or a value
// this executor does not know.
inline c10::ScalarType ScalarTypeOf(ir::Dtype dtype, c10::ScalarType fallback = c10::kFloat) {
  switch (dtype) {
    case ir::DTYPE_FP32: return c10::kFloat;
    case ir::DTYPE_BF16: return c10::kBFloat16;
    case ir::DTYPE_FP16: return c10::kHalf;
    default: return fallback;
  }
}

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_PLAN_DTYPE_H_
