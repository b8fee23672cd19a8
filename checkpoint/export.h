// `accel export`: turns a training checkpoint into a Hugging Face model directory
// (model.safetensors + config.json) that transformers' from_pretrained loads. Torch-free.
#ifndef ACCEL_CHECKPOINT_EXPORT_H_
#define ACCEL_CHECKPOINT_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace accel::exec {

// What ExportCheckpoint wrote.
struct ExportSummary {
  int64_t num_tensors = 0;  // tensors in model.safetensors
  int64_t num_bytes = 0;    // size of model.safetensors in bytes
  std::string model_path;   // OUT/model.safetensors
};

// Consolidates the checkpoint directory checkpoint_dir (a published step_N with a manifest) into
// out_dir (created if needed): out_dir/model.safetensors holds every global tensor whose name does
// not start with "optimizer." at its full shape and stored dtype, sorted by name, with metadata
// {"format": "pt"}; out_dir/config.json is a copy of the checkpoint's config.json. Both the sharded
// layout (shard-*.safetensors, see sharded_tensors.h) and the single-writer layout
// (model.safetensors of Trainer::SaveState) are read, and tensor-parallel slices are merged back
// into whole Hugging Face tensors (tp_layout.h); the copy of a tied word embedding that a last
// pipeline stage saves as lm_head.weight is left out when config.json ties the embeddings
// (DataLoss when it differs from the embedding); a mixture of experts' grouped routed-expert
// tensors are split into Hugging Face's per-expert tensors, named for config.json's model_type
// (checkpoint/expert_names.h); every file read is checked against the
// manifest's CRC-32C. Each output file is written to a temporary name, fsynced and renamed, so a
// crash never leaves a truncated file under the final name. Memory: about twice the model's bytes,
// plus two copies of the largest shard file while reading (optimizer states are dropped then). Errors: NotFound "DIR has no config.json"; those of
// ShardedTensorReader::Open (DataLoss for a corrupt or incomplete checkpoint, NotFound for one
// without tensors); Internal naming the path on an I/O failure. summary, when given, is filled on
// success.
absl::Status ExportCheckpoint(const std::string& checkpoint_dir, const std::string& out_dir,
                              ExportSummary* summary = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_EXPORT_H_
