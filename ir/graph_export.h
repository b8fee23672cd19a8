#ifndef ACCEL_IR_GRAPH_EXPORT_H_
#define ACCEL_IR_GRAPH_EXPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan.pb.h"

namespace accel::ir {

// Graphviz export of a plan: `accel plan --format dot|svg|png`.
//
// The DOT text is a pure function of the plan (no pointers, hash orders, clocks or locale), so it
// can be golden-tested byte for byte. Every function accepts a partially filled plan (as dumped
// after any planner pass) and draws what is there; a missing part becomes a one-line note.

// Plans with at most this many ranks get one box per rank in MeshToDot; larger plans are
// summarised (see MeshToDot).
inline constexpr int kMeshMaxFullRanks = 64;

// ScheduleToDot draws at most this many time slots; a longer timeline shows its first and last
// kScheduleMaxSlots / 2 slots around an ellipsis column. 160 slots hold a complete GPipe or 1F1B
// step of 16 stages × 64 microbatches (2·(m + p − 1) = 158 slots).
inline constexpr int64_t kScheduleMaxSlots = 160;

// ScheduleToDot draws at most this many stage rows; more stages show the first and last
// kScheduleMaxStages / 2 around an ellipsis row.
inline constexpr int kScheduleMaxStages = 32;


// The device mesh as a DOT digraph named "mesh". With at most kMeshMaxFullRanks ranks: one
// cluster per node ("node 0", …), one box per rank labeled "r<rank>" over its mesh coordinates
// (axes of size 1 omitted, e.g. "pp0 dpr1 tp1"), filled with its pipeline stage's color; ranks
// of one tensor-parallel group inside a dashed cluster (or joined by dashed lines when the group
// spans nodes); an edge from every rank to its pipeline successor (same coordinates, next stage);
// and a legend. Larger meshes are summarised in O(ranks) time and O(stages) output: node 0 in
// full (when it has at most kMeshMaxFullRanks ranks), then one box per pipeline stage with its
// rank, node and layer ranges, chained by pipeline edges (at most kScheduleMaxStages boxes, the
// middle elided). A 65,536-rank plan gives a few kilobytes.
std::string MeshToDot(const Plan& plan);

// The pipeline schedule as a DOT digraph named "schedule" holding one HTML-like table: one row
// per stage, one column per time slot from SimulatePipeline, cells "F<m>"/"B<m>" (forward blue,
// backward orange, alternating shades for even and odd microbatches) and grey idle cells (the
// bubble, merged into one cell per run), a busy count per row, and the simulated makespan and
// bubble fraction next to the plan's own bubble_fraction. Timelines longer than
// kScheduleMaxSlots or taller than kScheduleMaxStages are cut in the middle with an ellipsis
// cell and a note saying what was left out.
std::string ScheduleToDot(const Plan& plan);

// One DOT digraph named "plan" holding the mesh (cluster "cluster_mesh") above the schedule
// (cluster "cluster_schedule"), with the same content as MeshToDot and ScheduleToDot.
// This is what `accel plan --format dot` prints.
std::string PlanToDot(const Plan& plan);

// Lays out `dot` with Graphviz's dot engine in this process (gvc/cgraph, no subprocess) and
// renders it as `format`: "svg" (UTF-8 XML text) or "png" (binary, Cairo). Graphviz messages
// are captured, never printed. Errors: InvalidArgument for an unknown format, text that is not
// exactly one DOT graph (with Graphviz's message, e.g. "not a DOT graph: syntax error in line 3
// near '}'"), or a graph the layout rejects (e.g. a malformed HTML-like label); Internal when a
// renderer is missing or fails. Calls are serialised by a process-wide mutex because Graphviz
// keeps global state. The graph is read with a sequential object-ID discipline instead of
// agmemread's address-based one, so the output is the same on every call for the same input,
// Graphviz build and fonts.
absl::StatusOr<std::string> RenderDot(std::string_view dot, std::string_view format);

}  // namespace accel::ir

#endif  // ACCEL_IR_GRAPH_EXPORT_H_
