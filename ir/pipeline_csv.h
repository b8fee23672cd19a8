// Pipeline op lists in the CSV form torch.distributed.pipelining reads and writes
// (torch/distributed/pipelining/schedules.py: _PipelineScheduleRuntime._load_csv and _dump_csv
// with format "compute_comms"; torchtitan's pipeline_parallel_schedule_csv): one row per
// pipeline stage (rank), one cell per op, each cell an action as _Action.__repr__ writes it and
// _Action.from_str reads it: the virtual stage index, the computation type, the microbatch,
// e.g. "0F0", "3I1", "2SEND_F4". Types: F (FORWARD), B (the fused BACKWARD, PyTorch's
// FULL_BACKWARD), I (BACKWARD_INPUT), W (BACKWARD_WEIGHT), SEND_F / RECV_F (the activation;
// the stage index is the sending, resp. receiving, virtual stage), SEND_B / RECV_B (the
// gradient, likewise). Example, 1F1B with 2 stages and 2 microbatches:
//   0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1
//   1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1
#ifndef ACCEL_IR_PIPELINE_CSV_H_
#define ACCEL_IR_PIPELINE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::ir {

// The pipeline's op lists as CSV, one "\n"-terminated row per entry of Pipeline.stages. The
// virtual stage of an op is its chunk's ModelChunk.virtual_stage (the stage's index without
// chunks); peer_stage is not written (it follows from the virtual stages).
std::string PipelineToCsv(const Pipeline& pipeline);

// Reads that CSV ("\n" or "\r\n" rows; empty cells, PyTorch's idle steps, are skipped): row r
// is stage r, with index r, one ModelChunk per virtual stage its cells name when they name
// several (virtual_stage only, ascending: chunk c is the c-th smallest) and the ops, peers being
// the stages holding the neighbouring virtual stages. Lines and cells count from 1 in errors
// (InvalidArgument), e.g.
//   "line 2 (stage 1), cell 3: 'xF0' is not an action such as 0F0"
//   "line 1 (stage 0), cell 1: 0UNSHARD is not an op accel runs (F, B, I, W, SEND_F, RECV_F,
//    SEND_B, RECV_B)"
//   "line 1 (stage 0), cell 2: 0F has no microbatch"
//   "virtual stage 1 is on stages 0 and 1"
//   "virtual stages run 0 to 3 but 2 is on no stage"
//   "no rows"
absl::StatusOr<std::vector<PipelineStage>> ParsePipelineCsv(std::string_view csv);

}  // namespace accel::ir

#endif  // ACCEL_IR_PIPELINE_CSV_H_
