// Starting a model from Hugging Face weights (spec model.init_from; checkpoint/pretrained.h
// maps the checkpoint's files and reads the parts of tensors a rank owns).
#ifndef ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
#define ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "checkpoint/expert_names.h"
#include "checkpoint/pretrained.h"
#include "executor/models/causal_lm.h"
#include "executor/models/tensor_parallel.h"

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

// The part of one parameter a rank holds: flat elements [begin, end) (row-major) of its
// tensor-parallel slice, whose shape is `local` (the whole tensor without tensor parallelism).
// A ZeRO shard (ParamSlot::owned_begin/end) is such a range; a whole slice is [0, numel).
struct PretrainedPart {
  std::vector<int64_t> local;   // the tp-local shape
  TpSplit split;                // how the parameter is split over the tensor-parallel group
  int64_t tp_rank = 0;
  int64_t tp_size = 1;
  int64_t begin = 0;            // 0 <= begin <= end <= Π local
  int64_t end = 0;
};

// How a model's parameter names map to a Hugging Face checkpoint's (checkpoint/expert_names.h):
// the mixture-of-experts naming, and the first routed expert this rank holds (its grouped
// tensors' index 0).
struct PretrainedNames {
  ExpertNaming naming = ExpertNaming::kQwen;
  int64_t first_expert = 0;
};

// Copies `part` of parameter `name` (accel's name) into `target` as ReadPretrainedPart does, from
// the checkpoint tensor of its Hugging Face name; a grouped routed-expert tensor [El, ...] reads
// its range from the per-expert tensors of experts first_expert … first_expert + El − 1.
absl::Status ReadPretrainedParameter(PretrainedCheckpoint& checkpoint, const std::string& path,
                                     const std::string& name, const PretrainedPart& part,
                                     const PretrainedNames& names, at::Tensor target);

// The names of `model`'s checkpoints: its ModelConfig's moe.hf_model_type and LocalExperts().
PretrainedNames PretrainedNamesOf(const CausalLm& model);

// Copies `part` of checkpoint tensor `name` into `target` (end − begin elements, viewable as
// flat; its dtype is kept). Only the rows of the slice that the range touches are copied out of
// the mapped file: the range's bytes plus at most one partial row at each end (rows of
// Π local[1:] elements). Rows beyond a checkpoint's shorter vocabulary leave target's elements as
// they are. Errors: as LoadPretrained's (`path` names the checkpoint in them).
absl::Status ReadPretrainedPart(PretrainedCheckpoint& checkpoint, const std::string& path,
                                const std::string& name, const PretrainedPart& part, at::Tensor target);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_PRETRAINED_INIT_H_
