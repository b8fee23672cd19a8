// The files a checkpoint carries next to its tensors that describe them from the plan:
// config.json (for Hugging Face loaders) and, under tensor parallelism, tensor_parallel.json
// (for `accel export`). Torch-free. They live in the executor, not in the torch-free top-level
// checkpoint/ library, because the dimensions are the executor's model's (ModelConfigFromPlan:
// padded vocabulary, defaults applied), which that library does not link.
#ifndef ACCEL_EXECUTOR_CHECKPOINT_PLAN_METADATA_H_
#define ACCEL_EXECUTOR_CHECKPOINT_PLAN_METADATA_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// config.json text (checkpoint/hf_config.h HuggingFaceConfigJson) describing the tensors as
// stored: the dimensions the workers built the model with and torch_dtype from
// precision.param_dtype ("bfloat16", "float16", otherwise "float32"). Errors: those of
// ModelConfigFromPlan (InvalidArgument for a model the executor cannot build).
absl::StatusOr<std::string> ConfigJsonFor(const ir::Plan& plan);

// tensor_parallel.json text (checkpoint/tp_layout.h): the plan's tp degree and, for every
// parameter with tp_dim >= 0, its dim, parts and replicas (each at least 1), so `accel export`
// can merge the tp-major tensors without the plan. Written only when tp > 1.
std::string TpLayoutJsonFor(const ir::Plan& plan);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINT_PLAN_METADATA_H_
