// Hugging Face weights to start a job from (spec model.init_from): the index of a safetensors
// checkpoint, read from the files' headers only, and its check against the plan's parameter table.
// A checkpoint is one `.safetensors` file, or a directory holding `model.safetensors` or a sharded
// `model.safetensors.index.json` (its "weight_map" names the file of every tensor), as
// transformers' save_pretrained writes them. Torch-free: `accel run` checks before launch.
#ifndef ACCEL_CHECKPOINT_PRETRAINED_H_
#define ACCEL_CHECKPOINT_PRETRAINED_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/tp_layout.h"
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

// Reads the headers of the checkpoint at `path` (through PretrainedCheckpoint::Open, which maps
// its files). Errors: NotFound when nothing is there (or a directory has neither
// model.safetensors nor model.safetensors.index.json, or a file cannot be opened: "cannot open
// FILE: REASON"); Internal when a file cannot be mapped; DataLoss naming the
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
// A mixture of experts is read under Hugging Face's names (checkpoint/expert_names.h, for
// HuggingFaceModelType): a grouped routed-expert tensor [E, ...] from its E per-expert tensors.
std::vector<std::string> CheckPretrainedAgainstPlan(const ir::Plan& plan, const PretrainedIndex& index);

// What a PretrainedCheckpoint copied out of its files.
struct PretrainedReadStats {
  int64_t tensors = 0;         // Read calls that succeeded
  uint64_t bytes_copied = 0;   // bytes copied out of the mappings
  uint64_t pages_touched = 0;  // distinct pages (of sysconf(_SC_PAGESIZE) bytes) of the files
                               // those bytes lie on: what the kernel reads at least
  uint64_t tensor_bytes = 0;   // the whole size of the tensors read, in part or whole
};

// A checkpoint opened for reading: every file mapped once (MappedFile: read-only, MAP_PRIVATE)
// and its header indexed from the mapping, so a rank copies out only the bytes it owns and the
// kernel pages in only those (and the pages around them). Movable, not copyable; the mappings
// live as long as the object.
class PretrainedCheckpoint {
 public:
  // Opens the checkpoint at `path`: one .safetensors file, or a directory with a sharded
  // model.safetensors.index.json or model.safetensors. Every header offset is checked against
  // the file's size before use. Errors: those of OpenPretrained.
  static absl::StatusOr<PretrainedCheckpoint> Open(const std::string& path);

  PretrainedCheckpoint(PretrainedCheckpoint&&) noexcept;
  PretrainedCheckpoint& operator=(PretrainedCheckpoint&&) noexcept;
  ~PretrainedCheckpoint();

  const PretrainedIndex& index() const { return index_; }

  // Copies `selection` of tensor `t` (an entry of index()) out of its file: for selection.dim
  // d >= 0, the elements whose index along d lies in one of selection.ranges, each range cut to
  // [0, shape[d]) (rows past a checkpoint's vocabulary are simply absent); the whole tensor for
  // d < 0. For d >= 1 only the rows selection.rows of dim 0 (cut to [0, shape[0])). Row-major
  // runs are copied one by one (a strided read when d > 0). The result has t's dtype and shape,
  // shape[d] being the selected count (and shape[0] the kept rows for d >= 1), and `name`.
  // Errors: InvalidArgument "tensor NAME: ..." when d is not a dim of t, the ranges are not
  // increasing and disjoint or the rows not an increasing range; Internal when t does not lie
  // within its mapped file.
  absl::StatusOr<SafetensorsTensor> Read(const std::string& name, const PretrainedTensor& t,
                                         const TensorSelection& selection = {});

  const PretrainedReadStats& stats() const { return stats_; }

 private:
  struct Files;
  PretrainedCheckpoint();

  PretrainedIndex index_;
  std::unique_ptr<Files> files_;
  PretrainedReadStats stats_;
};

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_PRETRAINED_H_
