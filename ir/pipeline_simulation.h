// The one simulation of a pipeline schedule that the plan verifier and the schedule picture
// share: compute ops placed in unit time slots (the bubble both report) and the transport of
// activations and gradients between stages as the executor runs it (deadlocks, order).
#ifndef ACCEL_IR_PIPELINE_SIMULATION_H_
#define ACCEL_IR_PIPELINE_SIMULATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::ir {

// One compute op of a stage placed in the simulated timeline.
struct TimelineOp {
  int64_t slot = 0;                       // time slot, 0-based; every compute op takes one slot
  OpKind kind = OP_KIND_UNSPECIFIED;      // FORWARD, BACKWARD, BACKWARD_INPUT or BACKWARD_WEIGHT
  int32_t microbatch = 0;
  int32_t chunk = 0;                      // PipelineOp.chunk: the model chunk (interleaved)
};

// A pipeline schedule simulated in unit time slots (SimulatePipeline).
struct PipelineTimeline {
  // [stage position in Pipeline.stages][k]: the stage's compute ops in execution order, with
  // strictly increasing slots. Send and receive ops take no slot.
  std::vector<std::vector<TimelineOp>> stages;
  int64_t makespan_slots = 0;   // one past the last occupied slot of any stage
  int64_t busy_slots = 0;       // compute ops placed, summed over stages
  int64_t idle_slots = 0;       // stages × makespan − busy: the pipeline bubble
  double bubble_fraction = 0;   // idle_slots / (stages × makespan); 0 for an empty timeline
  // Empty when every compute op was placed. Otherwise the first stage (in stage order) whose
  // next op can never run, and the op it waits for, e.g.
  // "stage 1 stops at F3: waits for F3 on stage 0, which never runs"; ops after it are missing.
  std::string stall;
  // The transport check over the whole op lists, sends and receives included: every stage runs
  // its list in order with asynchronous sends and blocking receives over one FIFO channel per
  // (from, to, activation or gradient) — the executor's semantics (RunPipelineStage). Each
  // entry is a problem, e.g. "stage 1 receives microbatch 2 from stage 0 but the next one sent
  // is 1", "pipeline schedule deadlocks: stage 0@op3 stage 1@op2", "a send is never received
  // (stage 0 to stage 1, activation of microbatch 3)", "stage 0 op 2 has peer 0". Empty for a
  // schedule the planner wrote. Compute-only op lists (no sends or receives) pass it trivially.
  std::vector<std::string> transport;
};

// Simulates `pipeline` in unit time: each stage runs its compute ops one per slot in list order;
// FORWARD m of virtual stage k waits for FORWARD m of virtual stage k − 1 to finish, BACKWARD
// (or BACKWARD_INPUT) m of k for the same of k + 1, BACKWARD_WEIGHT m of k for BACKWARD_INPUT m
// of k (the activation and gradient sends and receives between them are taken as
// instantaneous). Virtual stages are where ModelChunk.virtual_stage puts them (the stage's index
// without chunks). Stage s is the s-th entry of Pipeline.stages. Every op taking one slot is
// Qi et al. 2023's T_F = T_B = T_W for the split backward (ZB-H1's bubble (p − 1)/(3m + p − 1)).
// With forward = backward = 1 slot, both GPipe and 1F1B take 2·(m + p − 1) slots and idle
// (p − 1)/(m + p − 1) of them (Narayanan et al., "Efficient Large-Scale Language Model Training
// on GPU Clusters Using Megatron-LM", 2021, §2.2). A malformed schedule yields a partial
// timeline with `stall` set; it never fails. The verifier (bubble, stalls, transport) and the
// schedule picture both read this one simulation.
PipelineTimeline SimulatePipeline(const Pipeline& pipeline);

// For each op of stage `stage` (an index into Pipeline.stages), the index in its peer stage's op
// list of the op at the other end of the same message: a send's matching receive, a receive's
// matching send; −1 for compute ops and for messages with no match (a malformed plan). A message
// is identified by its direction (activation or gradient), the sending virtual stage and the
// microbatch. Since every stage runs its list in order, a rank that receives the message its
// peer sent at index q knows the peer finished every receive before q: the executor uses this to
// release sent tensors as soon as their receiver has them.
std::vector<int> MatchingPeerOps(const Pipeline& pipeline, int stage);

// "F3" / "B3" / "I3" / "W3" (backward input, weight): a compute op's short name in pictures and
// messages; "F3c1" with chunk ≥ 0 (the model chunk of an interleaved or V schedule).
std::string PipelineOpName(OpKind kind, int32_t microbatch, int32_t chunk = -1);

}  // namespace accel::ir

#endif  // ACCEL_IR_PIPELINE_SIMULATION_H_
