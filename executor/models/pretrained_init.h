// Starting a model from Hugging Face weights (spec model.init_from; executor/checkpoint/pretrained.h
// maps the checkpoint's files and reads the parts of tensors a rank owns).
#ifndef ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
#define ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_

#include <string>

#include "absl/status/status.h"
#include "executor/checkpoint/pretrained.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {

// Copies every parameter of `model` from the checkpoint at `path`, converting dtypes (F64, F32,
// F16, BF16 to the parameter's). `model` is the one this rank keeps (BuildCausalLm's
// initializer runs after slicing): a pipeline stage reads only its stage's tensors (a tied
// head's copy reads the word embedding), and under tensor parallelism each split parameter reads
// only this rank's slice out of the mapped file (TpSelection: rows, or a strided read of column
// pieces, with gpt2's fused c_attn as 3 blocks). HF files store tensors in the layout accel's
// parameters have (gpt2's Conv1D weights [in, out] in both), so a slice of the model is the same
// slice of the file. Embedding and head rows beyond the checkpoint's (vocabulary padding) keep
// their values. `stats`, when given, receives what was copied out of the files.
// Errors: those of PretrainedCheckpoint::Open; InvalidArgument "PATH: the checkpoint has no
// tensor NAME" or "PATH: tensor NAME has shape [..], the model has [..]" (whole shapes, the
// model's being its tensor-parallel slice grown to the whole).
absl::Status LoadPretrained(CausalLm& model, const std::string& path,
                            PretrainedReadStats* stats = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
