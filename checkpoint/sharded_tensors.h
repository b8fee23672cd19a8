// Sharded checkpoints that any number of ranks can read back ("reshard on load"). Torch-free:
// tensors are raw little-endian bytes.
//
// Every data-parallel rank owns a contiguous FLAT element range [begin, end) of each global tensor
// it saves (the tensor flattened row-major), e.g. a parameter "transformer.h.0.attn.c_attn.weight"
// or an optimizer state "optimizer.exp_avg.<parameter name>". Ranges of different ranks tile
// [0, numel); a tensor may also be stored whole by one rank. A tensor replicated on several ranks
// must be written by exactly one of them (the caller picks, e.g. the lowest data-parallel rank).
//
// Rank r of w writes ShardFileName(r, w) = "shard-RRRRR-of-WWWWW.safetensors": a safetensors file
// whose tensors are 1-D slices [end - begin] under their global names, with
//   __metadata__ = {"format": "accel-shard", "version": "1",
//                   "slices": "{\"NAME\": {\"shape\": [..], \"range\": [begin, end]}, ...}"}
// (the slices value is a JSON object serialized into a string, since safetensors metadata values
// are strings). The files go into a checkpoint directory through CheckpointStore (BeginStep,
// WriteRankFiles, Publish), which records their CRC-32C in the manifest.
#ifndef ACCEL_CHECKPOINT_SHARDED_TENSORS_H_
#define ACCEL_CHECKPOINT_SHARDED_TENSORS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// One rank's part of a global tensor: safetensors dtype ("F32", "BF16", ... see safetensors.h),
// the global shape, the flat element range [begin, end) of the row-major flattened tensor, and
// that range's bytes ((end - begin) * dtype size, little-endian). An empty range is allowed.
struct TensorSlice {
  std::string name;
  std::string dtype;
  std::vector<int64_t> global_shape;
  int64_t begin = 0;
  int64_t end = 0;
  std::string data;
};

// A global tensor as a whole: name, safetensors dtype and shape.
struct GlobalTensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;

  // Number of elements: the product of shape (1 for a scalar).
  int64_t numel() const;
};

// File name of rank's shard among world_size ranks: "shard-RRRRR-of-WWWWW.safetensors" (zero-padded
// to 5 digits; rank is 0-based).
std::string ShardFileName(int rank, int world_size);

// Encodes one rank's slices as a shard file (layout at the top of this file), tensors in the given
// order. Errors: InvalidArgument "tensor NAME: unknown dtype X", "tensor NAME: negative dimension
// in shape [..]", "tensor NAME: range [b, e) is not within [0, N)" (begin < 0, end < begin or
// end > numel), "tensor NAME: D data bytes for range [b, e) of DTYPE, expected E", "duplicate
// tensor slice NAME", and SerializeSafetensors' errors (empty or reserved name).
absl::StatusOr<std::string> SerializeShardFile(const std::vector<TensorSlice>& slices);

// The global tensors of one checkpoint directory, readable by element range whatever the number of
// ranks that wrote it. Memory: Open holds the data of every tensor it keeps (all shard files, less
// the tensors the filter drops) for the reader's lifetime, plus one raw file at a time while
// parsing; a range read copies only the bytes asked for. Streaming from disk is future work.
class ShardedTensorReader {
 public:
  // Says whether a global tensor name is to be kept (nullptr keeps all).
  using Filter = std::function<bool(const std::string& name)>;

  // Reads every shard-*-of-*.safetensors file the manifest of checkpoint_dir lists, through
  // CheckpointStore::ReadFile (so sizes and CRC-32Cs are checked), and indexes their slices. A
  // checkpoint with no shard files but a model.safetensors (the single-writer layout of
  // Trainer::SaveState) is read as whole tensors from that file. Only tensors `keep` accepts are
  // retained and checked. Every kept tensor must be covered exactly once with one shape and dtype.
  // Errors: DataLoss "DIR: tensor NAME: elements [a, b) are missing", "DIR: tensor NAME: elements
  // [a, b) overlap (FILE and FILE)", "DIR: tensor NAME: shape [..] in FILE but [..] in FILE",
  // "DIR: tensor NAME: dtype X in FILE but Y in FILE", "DIR/FILE: ..." for a file that is not a
  // valid shard (bad metadata, slice size), and those of CheckpointStore::ReadFile and
  // ParseSafetensors (missing manifest, CRC mismatch, corrupt header); NotFound "DIR: the manifest
  // lists no shard-*.safetensors or model.safetensors" when there is nothing to read.
  static absl::StatusOr<ShardedTensorReader> Open(const std::string& checkpoint_dir, const Filter& keep = nullptr);

  // The kept global tensors, sorted by name.
  std::vector<GlobalTensorInfo> Tensors() const;

  // Bytes of elements [begin, end) of tensor name, flattened row-major ((end - begin) * dtype size
  // bytes), assembled across the files that hold them. Errors: NotFound "DIR: no tensor NAME";
  // InvalidArgument "tensor NAME: range [b, e) is not within [0, N)".
  absl::StatusOr<std::string> ReadRange(const std::string& name, int64_t begin, int64_t end) const;

  // All bytes of tensor name (ReadRange(name, 0, numel)). Errors: those of ReadRange.
  absl::StatusOr<std::string> ReadWhole(const std::string& name) const;

  // The checkpoint directory this reader was opened on.
  const std::string& dir() const { return dir_; }

 private:
  // Bytes of elements [begin, end) of one global tensor, from one file.
  struct Piece {
    int64_t begin = 0;
    int64_t end = 0;
    std::string file;
    std::string data;
  };
  struct Global {
    GlobalTensorInfo info;
    std::string first_file;     // the file that introduced info, for mismatch messages
    std::vector<Piece> pieces;  // non-empty pieces, sorted by begin once Open has checked them
  };

  absl::Status Add(const std::string& file, GlobalTensorInfo info, int64_t begin, int64_t end, std::string data);
  absl::Status SortAndCheckCoverage();

  std::string dir_;
  std::map<std::string, Global> tensors_;
};

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_SHARDED_TENSORS_H_
