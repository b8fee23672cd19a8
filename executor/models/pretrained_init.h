// Starting a model from Hugging Face weights (spec model.init_from; executor/checkpoint/pretrained.h
// reads the checkpoint's index).
#ifndef ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
#define ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_

#include <string>

#include "absl/status/status.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {

// Copies every parameter of `model` (a whole model: call it before tensor-parallel slicing) from
// the checkpoint at `path`, converting dtypes. Embedding and head rows beyond the checkpoint's
// (Megatron vocabulary padding) keep their values. Each tensor is read from its file range alone.
// Errors: those of OpenPretrained; InvalidArgument "PATH: the checkpoint has no tensor NAME" or
// "PATH: tensor NAME has shape [..], the model has [..]".
absl::Status LoadPretrained(CausalLm& model, const std::string& path);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
