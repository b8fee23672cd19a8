// Hugging Face weights to start a job from (spec model.init_from): the index of a safetensors
// checkpoint, read from the files' headers only, and its check against the plan's parameter table.
// A checkpoint is one `.safetensors` file, or a directory holding `model.safetensors` or a sharded
// `model.safetensors.index.json` (its "weight_map" names the file of every tensor), as
// transformers' save_pretrained writes them. Torch-free: `accel run` checks before launch.
#ifndef ACCEL_EXECUTOR_CHECKPOINT_PRETRAINED_H_
#define ACCEL_EXECUTOR_CHECKPOINT_PRETRAINED_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// Where one tensor's bytes are: [begin, end) of `file` (absolute offsets), little-endian,
// row-major, safetensors `dtype` ("F32", "BF16", ...).
struct PretrainedTensor {
  std::string file;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

using PretrainedIndex = std::map<std::string, PretrainedTensor>;

// Reads the headers of the checkpoint at `path`. Errors: NotFound when nothing is there (or a
// directory has neither model.safetensors nor model.safetensors.index.json); DataLoss naming the
// file for a header that is not safetensors (length beyond the file, not a JSON object, an
// unknown dtype, offsets that do not match the shape or leave the file) or an index whose
// weight_map is not an object of file names in the directory.
absl::StatusOr<PretrainedIndex> OpenPretrained(const std::string& path);

// The tensor holding parameter `name`: `name` itself, or without the "transformer." prefix
// (GPT-2 checkpoints saved from GPT2Model, e.g. openai-community/gpt2); nullptr when neither.
const PretrainedTensor* FindPretrained(const PretrainedIndex& index, const std::string& name);

// Every way the checkpoint does not fit the plan's parameters (plan.parameters: names and full
// shapes), one message each, empty when it fits: a missing tensor, a dtype that is not a float
// (F64, F32, F16, BF16), or another shape. The embedding and output rows may number
// model.vocab_size where the plan pads them to padded_vocab_size (the padding rows keep their
// seeded initialization). Tensors the plan does not name (buffers such as attn.bias) are ignored.
std::vector<std::string> CheckPretrainedAgainstPlan(const ir::Plan& plan, const PretrainedIndex& index);

// Reads tensor `t`'s bytes. Errors: Internal when the file cannot be read.
absl::StatusOr<std::string> ReadPretrainedBytes(const PretrainedTensor& t);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINT_PRETRAINED_H_
