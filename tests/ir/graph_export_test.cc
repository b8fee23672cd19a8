#include "ir/graph_export.h"

#include <graphviz/cgraph.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace accel::ir {
namespace {

// A plan with only topology, mesh and rank placement filled, as build-mesh writes them:
// axes pp, dp_replicate, dp_shard, cp, tp (tp innermost), node = rank / devices_per_node.
Plan MeshPlan(int nodes, int devices_per_node, std::array<int, 5> degrees) {
  static constexpr std::array<const char*, 5> kNames = {"pp", "dp_replicate", "dp_shard", "cp",
                                                         "tp"};
  Plan plan;
  plan.mutable_job()->set_name("unit");
  plan.mutable_topology()->set_nodes(nodes);
  plan.mutable_topology()->set_devices_per_node(devices_per_node);
  plan.mutable_topology()->set_world_size(int64_t{nodes} * devices_per_node);
  std::array<int64_t, 5> strides{};
  int64_t stride = 1;
  for (int i = 4; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= degrees[static_cast<size_t>(i)];
  }
  for (int i = 0; i < 5; ++i) {
    MeshAxis* axis = plan.mutable_mesh()->add_axes();
    axis->set_name(kNames[static_cast<size_t>(i)]);
    axis->set_size(degrees[static_cast<size_t>(i)]);
    axis->set_stride(strides[static_cast<size_t>(i)]);
  }
  const int world = nodes * devices_per_node;
  plan.mutable_ranks()->Reserve(world);
  for (int rank = 0; rank < world; ++rank) {
    RankPlacement* r = plan.add_ranks();
    r->set_rank(rank);
    r->set_node(rank / devices_per_node);
    r->set_local_rank(rank % devices_per_node);
    for (int i = 0; i < 5; ++i) {
      r->add_coords(static_cast<int32_t>(rank / strides[static_cast<size_t>(i)] %
                                         degrees[static_cast<size_t>(i)]));
    }
    r->set_stage(r->coords(0));
  }
  return plan;
}

void AddCompute(PipelineStage* stage, OpKind kind, int microbatch, int stages) {
  const int s = stage->index();
  auto add = [&](OpKind k, int peer) {
    PipelineOp* op = stage->add_ops();
    op->set_kind(k);
    op->set_microbatch(microbatch);
    op->set_peer_stage(peer);
  };
  if (kind == FORWARD) {
    if (s > 0) add(RECV_ACTIVATION, s - 1);
    add(FORWARD, -1);
    if (s + 1 < stages) add(SEND_ACTIVATION, s + 1);
  } else {
    if (s + 1 < stages) add(RECV_GRAD, s + 1);
    add(BACKWARD, -1);
    if (s > 0) add(SEND_GRAD, s - 1);
  }
}

// Fills plan.pipeline with p stages × m microbatches. 1F1B (PipeDream-Flush, Narayanan et al.
// 2021): stage s runs p − s − 1 warm-up forwards, then alternates one forward and one backward,
// then drains the remaining backwards. GPipe: all forwards, then all backwards.
void AddSchedule(Plan* plan, const std::string& schedule, int p, int m) {
  Pipeline* pipeline = plan->mutable_pipeline();
  pipeline->set_schedule(schedule == "gpipe" ? PIPELINE_SCHEDULE_GPIPE : PIPELINE_SCHEDULE_1F1B);
  pipeline->set_microbatches(m);
  pipeline->set_bubble_fraction(static_cast<double>(p - 1) / (m + p - 1));
  for (int s = 0; s < p; ++s) {
    PipelineStage* stage = pipeline->add_stages();
    stage->set_index(s);
    stage->set_layer_begin(2 * s);
    stage->set_layer_end(2 * s + 2);
    stage->set_has_embedding(s == 0);
    stage->set_has_lm_head(s == p - 1);
    if (schedule == "gpipe") {
      for (int mb = 0; mb < m; ++mb) AddCompute(stage, FORWARD, mb, p);
      for (int mb = 0; mb < m; ++mb) AddCompute(stage, BACKWARD, mb, p);
      stage->set_max_inflight_microbatches(m);
    } else {
      const int warmup = std::min(p - s - 1, m);
      for (int mb = 0; mb < warmup; ++mb) AddCompute(stage, FORWARD, mb, p);
      for (int i = 0; i < m - warmup; ++i) {
        AddCompute(stage, FORWARD, warmup + i, p);
        AddCompute(stage, BACKWARD, i, p);
      }
      for (int mb = m - warmup; mb < m; ++mb) AddCompute(stage, BACKWARD, mb, p);
      stage->set_max_inflight_microbatches(p - s);
    }
  }
}

// 2 nodes × 4 devices, pp 2 × dp_replicate 2 × tp 2.
Plan SmallPlan(const std::string& schedule) {
  Plan plan = MeshPlan(2, 4, {2, 2, 1, 1, 2});
  AddSchedule(&plan, schedule, 2, 4);
  return plan;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Parses DOT with cgraph directly; returns the node count, or -1 when it does not parse.
int ParsedNodeCount(const std::string& dot) {
  Agraph_t* graph = agmemread(dot.c_str());
  if (graph == nullptr) return -1;
  int nodes = agnnodes(graph);
  agclose(graph);
  return nodes;
}

// The slot string of one stage: "F0 F1 . B0" with "." for idle slots.
std::string StageRow(const PipelineTimeline& timeline, int stage) {
  std::vector<std::string> cells(static_cast<size_t>(timeline.makespan_slots), ".");
  for (const TimelineOp& op : timeline.stages[static_cast<size_t>(stage)]) {
    cells[static_cast<size_t>(op.slot)] =
        std::string(op.kind == FORWARD ? "F" : "B") + std::to_string(op.microbatch);
  }
  std::string row;
  for (const std::string& cell : cells) row += (row.empty() ? "" : " ") + cell;
  return row;
}

TEST_CASE("SimulatePipeline: 1F1B and GPipe take 2(m+p-1) slots with bubble (p-1)/(m+p-1)") {
  for (const char* schedule : {"1f1b", "gpipe"}) {
    for (auto [p, m] : std::vector<std::pair<int, int>>{{4, 8}, {2, 4}, {8, 8}, {3, 1}, {1, 5}}) {
      Plan plan;
      AddSchedule(&plan, schedule, p, m);
      PipelineTimeline timeline = SimulatePipeline(plan.pipeline());
      INFO(schedule << " p=" << p << " m=" << m);
      CHECK(timeline.stall.empty());
      CHECK(timeline.makespan_slots == 2 * (m + p - 1));
      CHECK(timeline.busy_slots == 2 * int64_t{m} * p);
      CHECK(timeline.idle_slots == int64_t{p} * 2 * (m + p - 1) - 2 * int64_t{m} * p);
      CHECK(timeline.bubble_fraction ==
            Approx(static_cast<double>(p - 1) / (m + p - 1)).epsilon(1e-12));
    }
  }
}

TEST_CASE("SimulatePipeline: slot-by-slot timeline of 2 stages × 4 microbatches") {
  Plan one_f_one_b = SmallPlan("1f1b");
  PipelineTimeline t = SimulatePipeline(one_f_one_b.pipeline());
  CHECK(StageRow(t, 0) == "F0 F1 . B0 F2 B1 F3 B2 . B3");
  CHECK(StageRow(t, 1) == ". F0 B0 F1 B1 F2 B2 F3 B3 .");

  Plan gpipe = SmallPlan("gpipe");
  t = SimulatePipeline(gpipe.pipeline());
  CHECK(StageRow(t, 0) == "F0 F1 F2 F3 . . B0 B1 B2 B3");
  CHECK(StageRow(t, 1) == ". F0 F1 F2 F3 B0 B1 B2 B3 .");
}

TEST_CASE("SimulatePipeline: 1F1B p=4 m=8 keeps at most p-s forwards in flight") {
  Plan plan;
  AddSchedule(&plan, "1f1b", 4, 8);
  PipelineTimeline t = SimulatePipeline(plan.pipeline());
  REQUIRE(t.makespan_slots == 22);
  CHECK(t.bubble_fraction == Approx(3.0 / 11.0));
  for (int s = 0; s < 4; ++s) {
    int inflight = 0;
    int peak = 0;
    for (const TimelineOp& op : t.stages[static_cast<size_t>(s)]) {
      inflight += op.kind == FORWARD ? 1 : -1;
      peak = std::max(peak, inflight);
    }
    CHECK(peak == 4 - s);
  }
}

TEST_CASE("SimulatePipeline: a missing peer op or a deadlock is reported, not fatal") {
  Plan plan;
  AddSchedule(&plan, "gpipe", 2, 2);
  // Stage 0 never runs F1, so stage 1 cannot either.
  PipelineStage* stage0 = plan.mutable_pipeline()->mutable_stages(0);
  for (int i = 0; i < stage0->ops_size(); ++i) {
    if (stage0->ops(i).kind() == FORWARD && stage0->ops(i).microbatch() == 1) {
      stage0->mutable_ops(i)->set_microbatch(7);
    }
  }
  PipelineTimeline t = SimulatePipeline(plan.pipeline());
  CHECK(t.stall == "stage 1 stops at F1: waits for F1 on stage 0, which never runs");

  Plan deadlock;
  AddSchedule(&deadlock, "gpipe", 2, 1);
  // Stage 0 runs B0 first: it waits for stage 1's B0, which waits for stage 0's F0.
  PipelineStage* first = deadlock.mutable_pipeline()->mutable_stages(0);
  first->clear_ops();
  AddCompute(first, BACKWARD, 0, 2);
  AddCompute(first, FORWARD, 0, 2);
  t = SimulatePipeline(deadlock.pipeline());
  CHECK(t.stall == "stage 0 stops at B0: waits for B0 on stage 1, which is blocked too (deadlock)");
  CHECK(Contains(ScheduleToDot(deadlock), "schedule stalls: stage 0 stops at B0"));
}

TEST_CASE("MeshToDot: 8 ranks on 2 nodes with pp 2, dp 2, tp 2") {
  Plan plan = SmallPlan("1f1b");
  std::string dot = MeshToDot(plan);
  CHECK(dot.rfind("digraph mesh {\n", 0) == 0);
  CHECK(Contains(dot, "label=\"device mesh · 8 ranks = 2 nodes × 4 · pp 2 × dp_replicate 2 × tp 2\""));
  CHECK(Contains(dot, "subgraph cluster_node0 {\n      label=\"node 0\""));
  CHECK(Contains(dot, "subgraph cluster_node1 {\n      label=\"node 1\""));
  // One dashed cluster per tp group, named after its first rank.
  for (int first : {0, 2, 4, 6}) {
    CHECK(Contains(dot, "subgraph cluster_tp_r" + std::to_string(first) + " {"));
  }
  CHECK_FALSE(Contains(dot, "cluster_tp_r1 "));
  // Rank boxes: coordinates without size-1 axes, stage colors from the palette.
  CHECK(Contains(dot, "r5 [label=\"r5\\npp1 dpr0 tp1\", fillcolor=\"#EE8866\", "
                      "tooltip=\"rank 5, node 1, local rank 1, stage 1\"];"));
  CHECK(Contains(dot, "r2 [label=\"r2\\npp0 dpr1 tp0\", fillcolor=\"#77AADD\""));
  // Pipeline successors: same coordinates, next stage.
  for (int r = 0; r < 4; ++r) {
    CHECK(Contains(dot, "r" + std::to_string(r) + " -> r" + std::to_string(r + 4) + ";\n"));
  }
  CHECK_FALSE(Contains(dot, "r4 -> r0"));
  // Legend with the stage contents.
  CHECK(Contains(dot, "stage 0: embedding + layers 0–1"));
  CHECK(Contains(dot, "stage 1: layers 2–3 + head"));
  CHECK(Contains(dot, "dashed box: tensor-parallel group (tp 2)"));
  CHECK(Contains(dot, "coordinates: pp, dpr = dp_replicate, tp"));
  // 8 rank boxes + the legend.
  CHECK(ParsedNodeCount(dot) == 9);
  CHECK(MeshToDot(plan) == dot);
}

TEST_CASE("MeshToDot: tp groups that span nodes are joined by dashed lines") {
  Plan plan = MeshPlan(4, 2, {1, 2, 1, 1, 4});  // tp 4 over 2-device nodes
  std::string dot = MeshToDot(plan);
  CHECK_FALSE(Contains(dot, "cluster_tp_"));
  CHECK(Contains(dot, "r1 -> r2 [dir=none, style=dashed, constraint=false];"));
  CHECK(Contains(dot, "r0 -> r1 [dir=none, style=dashed, constraint=false];"));
  CHECK_FALSE(Contains(dot, "r3 -> r4 [dir=none"));
  CHECK(ParsedNodeCount(dot) == 9);
}

TEST_CASE("MeshToDot: a partial plan draws a note") {
  Plan plan;
  std::string dot = MeshToDot(plan);
  CHECK(Contains(dot, "no ranks placed in this plan"));
  CHECK(ParsedNodeCount(dot) == 1);
  CHECK(Contains(ScheduleToDot(plan), "no pipeline stages in this plan"));
  CHECK(ParsedNodeCount(PlanToDot(plan)) == 2);
}

TEST_CASE("MeshToDot: 64 ranks are drawn in full, 65 are summarised") {
  std::string full = MeshToDot(MeshPlan(8, 8, {4, 2, 1, 1, 8}));
  CHECK(Contains(full, "r63 [label="));
  CHECK(Contains(full, "subgraph cluster_node7 {"));
  CHECK_FALSE(Contains(full, "mesh_summary"));
  CHECK(ParsedNodeCount(full) == 65);

  Plan odd = MeshPlan(13, 5, {1, 65, 1, 1, 1});
  std::string summary = MeshToDot(odd);
  CHECK(Contains(summary, "subgraph cluster_node0 {\n      label=\"node 0 in full\""));
  CHECK(Contains(summary, "r4 [label="));
  CHECK_FALSE(Contains(summary, "r5 [label="));
  CHECK(Contains(summary, "stage0 [label=\"stage 0\\nranks 0–64 (65)\\nnodes 0–12 (13)\""));
  CHECK(ParsedNodeCount(summary) == 5 + 1 + 1 + 1);  // node 0, legend, note, one stage
}

TEST_CASE("MeshToDot: 65,536 ranks give a small DOT quickly") {
  Plan plan = MeshPlan(8192, 8, {8, 64, 16, 1, 8});
  AddSchedule(&plan, "1f1b", 8, 16);
  auto start = std::chrono::steady_clock::now();
  std::string dot = MeshToDot(plan);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("DOT bytes: " << dot.size() << ", seconds: " << seconds);
  CHECK(dot.size() < 50 * 1024);
  CHECK(seconds < 5.0);  // generous: a hang or quadratic blow-up, not a benchmark
  CHECK(Contains(dot, "65,536 ranks on 8,192 nodes"));
  CHECK(Contains(dot, "stage 3\\nranks 24576–32767 (8,192)\\nnodes 3072–4095 (1,024)\\nlayers 6–7"));
  CHECK(Contains(dot, "stage6 -> stage7 [label=\" pp\"];"));
  CHECK_FALSE(Contains(dot, "r8 [label="));
  // Node 0 in full, its one tp group, the legend, the note, 8 stage boxes.
  CHECK(ParsedNodeCount(dot) == 8 + 1 + 1 + 8);
  CHECK(RenderDot(dot, "svg").ok());
}

TEST_CASE("MeshToDot: more stages than kScheduleMaxStages elide the middle ones") {
  Plan plan = MeshPlan(40, 2, {40, 2, 1, 1, 1});
  std::string dot = MeshToDot(plan);
  CHECK(Contains(dot, "stage15 ["));
  CHECK_FALSE(Contains(dot, "stage16 ["));
  CHECK(Contains(dot, "stage_elided [style=\"rounded,dashed\", label=\"…\\n8 more stages (16–23)\"]"));
  CHECK(Contains(dot, "stage24 ["));
  CHECK(Contains(dot, "stage15 -> stage_elided"));
  CHECK(Contains(dot, "stages 0, 9, 18, …"));
}

TEST_CASE("ScheduleToDot: the 1F1B and GPipe timelines of 2 stages × 4 microbatches") {
  std::string dot = ScheduleToDot(SmallPlan("1f1b"));
  CHECK(dot.rfind("digraph schedule {\n", 0) == 0);
  CHECK(Contains(dot, "label=\"pipeline schedule · 1f1b · 2 stages × 4 microbatches\""));
  CHECK(Contains(dot, "makespan 10 slots · bubble 20.0% simulated, 20.0% planned"));
  // Stage 0: F0 F1 idle B0 F2 B1 F3 B2 idle B3 (10 slots from slot 0).
  CHECK(Contains(dot,
                 "<TR><TD BGCOLOR=\"#77AADD\" ALIGN=\"LEFT\">stage 0</TD>"
                 "<TD BGCOLOR=\"#A6CEE8\">F0</TD><TD BGCOLOR=\"#6BAED6\">F1</TD>"
                 "<TD BGCOLOR=\"#EEEEEE\"></TD><TD BGCOLOR=\"#FDC38D\">B0</TD>"
                 "<TD BGCOLOR=\"#A6CEE8\">F2</TD><TD BGCOLOR=\"#FD9A4C\">B1</TD>"
                 "<TD BGCOLOR=\"#6BAED6\">F3</TD><TD BGCOLOR=\"#FDC38D\">B2</TD>"
                 "<TD BGCOLOR=\"#EEEEEE\"></TD><TD BGCOLOR=\"#FD9A4C\">B3</TD>"
                 "<TD BORDER=\"0\"><FONT POINT-SIZE=\"9\">8/10"));
  CHECK(ParsedNodeCount(dot) == 1);

  std::string gpipe = ScheduleToDot(SmallPlan("gpipe"));
  // Stage 0 of GPipe idles two slots between its forwards and backwards: one merged cell.
  CHECK(Contains(gpipe, "F3</TD><TD BGCOLOR=\"#EEEEEE\" COLSPAN=\"2\"></TD><TD BGCOLOR=\"#FDC38D\">B0"));
  CHECK(Contains(gpipe, "makespan 10 slots · bubble 20.0% simulated"));
}

// Interleaved 1F1B, p 2 × v 2 chunks × m 2 microbatches: with m = p every forward comes first
// (Megatron-LM's warm-up of all m·v forwards), compute ops only.
Plan InterleavedPlan() {
  Plan plan = MeshPlan(1, 2, {2, 1, 1, 1, 1});
  Pipeline* pipeline = plan.mutable_pipeline();
  pipeline->set_schedule(PIPELINE_SCHEDULE_INTERLEAVED_1F1B);
  pipeline->set_microbatches(2);
  pipeline->set_virtual_stages(2);
  pipeline->set_bubble_fraction(1.0 / 5.0);
  for (int s = 0; s < 2; ++s) {
    PipelineStage* stage = pipeline->add_stages();
    stage->set_index(s);
    for (int c = 0; c < 2; ++c) stage->add_chunks()->set_virtual_stage(2 * c + s);
    auto add = [&](OpKind kind, int mb, int chunk) {
      PipelineOp* op = stage->add_ops();
      op->set_kind(kind);
      op->set_microbatch(mb);
      op->set_chunk(chunk);
      op->set_peer_stage(-1);
    };
    for (int chunk : {0, 1}) {
      for (int mb : {0, 1}) add(FORWARD, mb, chunk);
    }
    for (int chunk : {1, 0}) {
      for (int mb : {0, 1}) add(BACKWARD, mb, chunk);
    }
  }
  return plan;
}

TEST_CASE("SimulatePipeline and ScheduleToDot: interleaved chunks wait on their virtual stages") {
  const Plan plan = InterleavedPlan();
  const PipelineTimeline t = SimulatePipeline(plan.pipeline());
  CHECK(t.stall.empty());
  CHECK(t.makespan_slots == 10);
  CHECK(t.bubble_fraction == Approx(0.2));
  // Stage 0's chunk 1 is virtual stage 2: its forward of microbatch 0 waits for stage 1's chunk 0.
  std::vector<std::string> row0, row1;
  for (const TimelineOp& op : t.stages[0]) row0.push_back(std::to_string(op.slot) + PipelineOpName(op.kind, op.microbatch, op.chunk));
  for (const TimelineOp& op : t.stages[1]) row1.push_back(std::to_string(op.slot) + PipelineOpName(op.kind, op.microbatch, op.chunk));
  CHECK(row0 == std::vector<std::string>{"0F0c0", "1F1c0", "2F0c1", "3F1c1", "6B0c1", "7B1c1", "8B0c0", "9B1c0"});
  CHECK(row1 == std::vector<std::string>{"1F0c0", "2F1c0", "3F0c1", "4F1c1", "5B0c1", "6B1c1", "7B0c0", "8B1c0"});
  const std::string dot = ScheduleToDot(plan);
  CHECK(Contains(dot, "label=\"pipeline schedule · interleaved_1f1b · 2 stages × 2 chunks × 2 microbatches\""));
  CHECK(Contains(dot, "makespan 10 slots · bubble 20.0% simulated, 20.0% planned (p−1)/(v·m+p−1)"));
  CHECK(Contains(dot, "<TD BGCOLOR=\"#6BAED6\">F0c1</TD>"));
  CHECK(Contains(dot, "forward of microbatch m through chunk k"));
  CHECK(ParsedNodeCount(dot) == 1);
}

TEST_CASE("ScheduleToDot: long and tall schedules are cut in the middle with a note") {
  Plan plan;
  AddSchedule(&plan, "1f1b", 40, 100);  // 2·(100+39) = 278 slots
  std::string dot = ScheduleToDot(plan);
  CHECK(Contains(dot, "slots 80–197 of 278 not shown"));
  CHECK(Contains(dot, "stages 16–23 not shown"));
  CHECK(Contains(dot, "⋮ stages 16–23 not shown"));
  CHECK(Contains(dot, ">stage 39</TD>"));
  CHECK_FALSE(Contains(dot, ">stage 16</TD>"));
  CHECK(dot.size() < 200 * 1024);
  CHECK(ParsedNodeCount(dot) == 1);
}

TEST_CASE("PlanToDot: both parts in one document") {
  Plan plan = SmallPlan("1f1b");
  std::string dot = PlanToDot(plan);
  CHECK(dot.rfind("digraph plan {\n", 0) == 0);
  CHECK(Contains(dot, "label=\"accel plan · unit\""));
  CHECK(Contains(dot, "subgraph cluster_mesh {"));
  CHECK(Contains(dot, "subgraph cluster_schedule {"));
  CHECK(Contains(dot, "r7 -> schedule_table [style=invis];"));
  CHECK(ParsedNodeCount(dot) == 10);
  plan.mutable_job()->set_name("a \"quoted\" <name>");
  CHECK(Contains(PlanToDot(plan), "label=\"accel plan · a \\\"quoted\\\" <name>\""));
  CHECK(ParsedNodeCount(PlanToDot(plan)) == 10);
}

TEST_CASE("RenderDot: SVG and PNG in process") {
  std::string dot = PlanToDot(SmallPlan("1f1b"));
  absl::StatusOr<std::string> svg = RenderDot(dot, "svg");
  REQUIRE(svg.ok());
  CHECK(svg->rfind("<?xml", 0) == 0);
  CHECK(Contains(*svg, "<svg"));
  CHECK(Contains(*svg, "node 1"));
  CHECK(RenderDot(dot, "svg").value() == *svg);  // deterministic

  absl::StatusOr<std::string> png = RenderDot(dot, "png");
  REQUIRE(png.ok());
  REQUIRE(png->size() > 8);
  CHECK(png->compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);

  CHECK(RenderDot(ScheduleToDot(SmallPlan("gpipe")), "svg").ok());
  CHECK(RenderDot(MeshToDot(SmallPlan("gpipe")), "png").ok());
}

TEST_CASE("RenderDot: errors are statuses with Graphviz's message") {
  absl::StatusOr<std::string> bad = RenderDot("digraph { a -> ; }", "svg");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()) == "not a DOT graph: syntax error in line 1 near ';'");

  absl::StatusOr<std::string> empty = RenderDot("", "svg");
  REQUIRE_FALSE(empty.ok());
  CHECK(std::string(empty.status().message()) == "not a DOT graph: no graph in the input");

  absl::StatusOr<std::string> format = RenderDot("digraph { a }", "gif");
  REQUIRE_FALSE(format.ok());
  CHECK(format.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(format.status().message()) ==
        "unknown render format \"gif\"; expected \"svg\" or \"png\"");

  absl::StatusOr<std::string> two = RenderDot("digraph { a }\ndigraph { b }\n", "svg");
  REQUIRE_FALSE(two.ok());
  CHECK(std::string(two.status().message()) == "DOT input holds more than one graph; expected one");

  absl::StatusOr<std::string> late = RenderDot("digraph {\n  a -> b;\n  c -> ;\n}\n", "svg");
  REQUIRE_FALSE(late.ok());
  CHECK(std::string(late.status().message()) == "not a DOT graph: syntax error in line 3 near ';'");

  // Errors found during layout (here a broken HTML-like label) fail too, instead of the
  // fallback drawing Graphviz would make.
  absl::StatusOr<std::string> html = RenderDot("digraph { a [label=<<TABLE><TR></TABLE>>] }", "png");
  REQUIRE_FALSE(html.ok());
  CHECK(html.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(html.status().message()) ==
        "Graphviz dot layout failed: mismatched tag in line 1 ... <TR></TABLE> ... in label of "
        "node a");

  // A failure leaves Graphviz usable.
  CHECK(RenderDot("digraph { a -> b }", "svg").ok());
}

}  // namespace
}  // namespace accel::ir
