// The part of the model one pipeline stage holds, and how it is read from the plan. Torch-free.
#ifndef ACCEL_EXECUTOR_MODELS_STAGE_SPAN_H_
#define ACCEL_EXECUTOR_MODELS_STAGE_SPAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::exec {

// The part of the model one pipeline stage holds (ir::PipelineStage): transformer blocks
// [layer_begin, layer_end), the embeddings when has_embedding, and the final norm, the output
// head and the loss when has_head. The default is the whole model. An interleaved stage
// (ir::ModelChunk) holds more model chunks: chunk 0 is [layer_begin, layer_end), later_chunks
// the others in chunk order; the embeddings feed chunk 0 and the head follows the last chunk.
struct StageSpan {
  int64_t layer_begin = 0;
  int64_t layer_end = -1;  // one past the last block; −1: through the last block
  bool has_embedding = true;
  bool has_head = true;
  std::vector<std::pair<int64_t, int64_t>> later_chunks;  // [begin, end) of chunks 1, 2, …

  // The blocks' end for a model of `num_layers` blocks.
  int64_t End(int64_t num_layers) const { return layer_end < 0 ? num_layers : layer_end; }
  // Whether this is the whole model of `num_layers` blocks.
  bool Whole(int64_t num_layers) const {
    return layer_begin == 0 && End(num_layers) == num_layers && has_embedding && has_head &&
           later_chunks.empty();
  }
  int NumChunks() const { return 1 + static_cast<int>(later_chunks.size()); }
  // [begin, end) of chunk c (0 ≤ c < NumChunks()) of a model of `num_layers` blocks.
  std::pair<int64_t, int64_t> Chunk(int c, int64_t num_layers) const {
    return c == 0 ? std::make_pair(layer_begin, End(num_layers)) : later_chunks[static_cast<size_t>(c - 1)];
  }
};

// The span of `rank`'s pipeline stage in `plan` (ir::PipelineStage and its ir::ModelChunk
// list); the whole model when the plan has at most one stage. `rank` must be a rank of the plan.
StageSpan StageSpanFromPlan(const ir::Plan& plan, int rank);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_STAGE_SPAN_H_
