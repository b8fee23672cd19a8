// How a tensor-parallel checkpoint stores its split parameters, and the merge back to the whole
// Hugging Face tensors that `accel export` writes. Torch-free.
//
// Under tensor parallelism (tp > 1) a checkpoint stores every tp-split parameter "tp-major": one
// global tensor of shape [tp, local shape...] whose row r is tp rank r's slice (see
// Trainer::SaveShard), and the file tensor_parallel.json records how each was split:
//   {"degree": T, "parameters": {"NAME": {"dim": D, "parts": P}, ...}}
// with D and P as ir::Parameter.tp_dim and tp_parts: along dim D of the whole tensor lie P equal
// blocks (gpt2's c_attn holds q, k and v), and rank r holds slice r of every block, in order.
// A parameter whose slices are each held by R > 1 ranks (ir::Parameter.tp_replicas: replicated
// key/value heads) adds "replicas": R and is stored once per slice: [T / R, local shape...].
#ifndef ACCEL_CHECKPOINT_TP_LAYOUT_H_
#define ACCEL_CHECKPOINT_TP_LAYOUT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/safetensors.h"

namespace accel::exec {

// The name of the split record inside a checkpoint directory.
inline constexpr char kTensorParallelFile[] = "tensor_parallel.json";

// One parameter's split (ir::Parameter.tp_dim, tp_parts).
struct TpSplitRecord {
  int dim = 0;
  int parts = 1;
  int replicas = 1;  // ranks holding each slice; the tensor is stacked over degree / replicas
};

// The checkpoint's record of tensor parallelism.
struct TpLayoutRecord {
  int64_t degree = 1;
  std::map<std::string, TpSplitRecord> parameters;  // tp-split parameters only
};

// A part of a tensor along one dim: the indices along dim `dim` in [begin, end) of each range
// (ranges in increasing order, not overlapping), every index of the other dims. dim −1: the
// whole tensor. For dim >= 1, `rows` also keeps only the indices [rows.first, rows.second) of
// dim 0 (a flat shard of a column-split tensor: the rows its range touches, of each row the
// columns of its slice); it is ignored for dim <= 0.
struct TensorSelection {
  int dim = -1;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::pair<int64_t, int64_t> rows{0, INT64_MAX};
};

// What tensor-parallel rank `rank` of `size` holds of a tensor split as `split` whose dim
// split.dim has `extent` indices in the whole model (the padded vocabulary for embeddings): slice
// `rank` of each of the split.parts equal blocks, in order (as TpSlice in
// executor/models/tensor_parallel.h). The whole tensor for dim < 0 or size 1. The caller ensures
// extent divides into parts × size.
TensorSelection TpSelection(TpSplitRecord split, int64_t extent, int64_t rank, int64_t size);

// Serializes `record` as tensor_parallel.json (keys sorted, so byte-identical for equal records).
std::string TpLayoutJson(const TpLayoutRecord& record);

// Parses tensor_parallel.json ("replicas" optional, 1 when absent). Errors: DataLoss "SOURCE is
// malformed: WHY" for bad JSON, a degree below 2, a split with dim < 0 or parts < 1, or replicas
// that do not divide the degree.
absl::StatusOr<TpLayoutRecord> ParseTpLayoutJson(const std::string& text, const std::string& source);

// The whole tensor from a tp-major one: stacked has shape [degree, local...]; the result has the
// local shape with dim split.dim grown degree times, the blocks of every rank interleaved as
// described above, and the same dtype. Errors: InvalidArgument "tensor NAME: ..." when the shape
// is not [degree, ...], split.dim is not a local dim, the dim does not divide into split.parts,
// or the data size does not match the shape and dtype.
absl::StatusOr<SafetensorsTensor> MergeTpMajor(const SafetensorsTensor& stacked, int64_t degree,
                                               TpSplitRecord split);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_TP_LAYOUT_H_
