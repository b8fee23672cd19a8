#include "ir/graph_export.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/html_escape.h"
#include "common/units.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"

namespace accel::ir {
namespace {

// Paul Tol's "light" qualitative scheme: distinguishable under the common color-vision
// deficiencies and light enough for black text (https://personal.sron.nl/~pault/).
constexpr std::array<const char*, 9> kStageColors = {
    "#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#99DDFF",
    "#44BB99", "#BBCC33", "#AAAA00", "#DDDDDD"};

// Forward blue and backward orange (ColorBrewer Blues/Oranges, a pair that stays apart for
// deuteranopes and protanopes), two shades each so neighbouring microbatches differ.
constexpr std::array<const char*, 2> kForwardColors = {"#A6CEE8", "#6BAED6"};
constexpr std::array<const char*, 2> kBackwardColors = {"#FDC38D", "#FD9A4C"};
constexpr const char* kIdleColor = "#EEEEEE";
constexpr const char* kFontName = "Helvetica,Arial,sans-serif";

// MeshToDot puts nodes that hold the same stages side by side up to this many ranks per row.
constexpr int64_t kMeshMaxRowRanks = 16;

// The rank-box label abbreviations; the legend spells them out.
absl::string_view AxisShortName(absl::string_view name) {
  if (name == "dp_replicate") return "dpr";
  if (name == "dp_shard") return "dps";
  return name;
}

const char* StageColor(int64_t stage) {
  if (stage < 0) return "#FFFFFF";
  return kStageColors[static_cast<size_t>(stage) % kStageColors.size()];
}

// Text inside a DOT double-quoted string. Line breaks are added by callers as "\\n".
std::string EscapeDot(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// "3" or "3–7" (inclusive bounds).
std::string RangeText(int64_t first, int64_t last) {
  if (first == last) return absl::StrCat(first);
  return absl::StrCat(first, "–", last);
}

std::string Percent(double fraction) { return absl::StrFormat("%.1f%%", 100.0 * fraction); }

// The indices 0..n-1 when n <= max; otherwise the first max/2 and the last max - max/2 with a
// single -1 marking the gap between them.
std::vector<int64_t> ElidedIndices(int64_t n, int64_t max) {
  std::vector<int64_t> out;
  if (n <= max) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  int64_t head = max / 2;
  int64_t tail = max - head;
  for (int64_t i = 0; i < head; ++i) out.push_back(i);
  out.push_back(-1);
  for (int64_t i = n - tail; i < n; ++i) out.push_back(i);
  return out;
}

// Graph, node and edge defaults shared by the three documents.
void AppendDefaults(std::string_view label, std::string* out) {
  absl::StrAppend(out, "  graph [fontname=\"", kFontName,
                  "\", fontsize=12, labelloc=t, labeljust=l, nodesep=0.12, ranksep=0.45, "
                  "remincross=false, "
                  "label=\"",
                  EscapeDot(label), "\"];\n");
  absl::StrAppend(out, "  node [fontname=\"", kFontName,
                  "\", fontsize=10, shape=box, style=\"rounded,filled\", color=\"#444444\", "
                  "margin=\"0.08,0.03\", height=0.3];\n");
  absl::StrAppend(out, "  edge [fontname=\"", kFontName,
                  "\", fontsize=9, color=\"#444444\", arrowsize=0.6];\n");
}

// ---------------------------------------------------------------------------------------------
// Mesh

struct MeshAxes {
  std::vector<std::string> names;  // Mesh.axes order
  std::vector<int64_t> sizes;
  int pp = -1;  // index of the axis, -1 when absent
  int tp = -1;
};

MeshAxes ReadAxes(const Plan& plan) {
  MeshAxes axes;
  for (int i = 0; i < plan.mesh().axes_size(); ++i) {
    const MeshAxis& axis = plan.mesh().axes(i);
    axes.names.push_back(axis.name());
    axes.sizes.push_back(axis.size());
    if (axis.name() == "pp") axes.pp = i;
    if (axis.name() == "tp") axes.tp = i;
  }
  return axes;
}

int64_t AxisSize(const MeshAxes& axes, int index) {
  return index >= 0 ? axes.sizes[static_cast<size_t>(index)] : 1;
}

// Pipeline depth: the pp axis when the mesh is built, else what the stages and ranks say.
int64_t StageCount(const Plan& plan, const MeshAxes& axes) {
  int64_t count = std::max<int64_t>(AxisSize(axes, axes.pp), plan.pipeline().stages_size());
  return std::max<int64_t>(count, 1);
}

// "embedding + layers 0–5 + head" for a stage, or "" when the pipeline pass has not run.
std::string StageContents(const Plan& plan, int64_t stage) {
  for (const PipelineStage& s : plan.pipeline().stages()) {
    if (s.index() != stage) continue;
    std::vector<std::string> parts;
    if (s.has_embedding()) parts.push_back("embedding");
    if (StageLayerCount(s) > 0) parts.push_back(absl::StrCat("layers ", StageLayersText(s, "–")));
    if (s.has_lm_head()) parts.push_back("head");
    return absl::StrJoin(parts, " + ");
  }
  return "";
}

std::string RankId(int32_t rank) { return absl::StrCat("r", rank); }

std::string RankBox(const RankPlacement& r, const MeshAxes& axes) {
  std::vector<std::string> coords;
  for (int i = 0; i < r.coords_size(); ++i) {
    if (i < static_cast<int>(axes.names.size())) {
      if (axes.sizes[static_cast<size_t>(i)] <= 1) continue;
      coords.push_back(absl::StrCat(AxisShortName(axes.names[static_cast<size_t>(i)]), r.coords(i)));
    } else {
      coords.push_back(absl::StrCat("a", i, "=", r.coords(i)));
    }
  }
  std::string label = RankId(r.rank());
  if (!coords.empty()) absl::StrAppend(&label, "\\n", absl::StrJoin(coords, " "));
  return absl::StrCat(RankId(r.rank()), " [label=\"", label, "\", fillcolor=\"",
                      StageColor(r.stage()), "\", tooltip=\"rank ", r.rank(), ", node ", r.node(),
                      ", local rank ", r.local_rank(), ", stage ", r.stage(), "\"];\n");
}

// Coordinates with one axis left out: ranks sharing this key differ only along that axis.
std::vector<int32_t> CoordsWithout(const RankPlacement& r, int axis) {
  std::vector<int32_t> key;
  for (int i = 0; i < r.coords_size(); ++i) {
    if (i != axis) key.push_back(r.coords(i));
  }
  return key;
}

// Tensor-parallel groups among `ranks` (ordered by rank): members in rank order, groups ordered
// by their first rank. Empty when tp is 1 or the mesh has no tp axis.
std::vector<std::vector<const RankPlacement*>> TpGroups(
    const std::vector<const RankPlacement*>& ranks, const MeshAxes& axes) {
  std::vector<std::vector<const RankPlacement*>> groups;
  if (axes.tp < 0 || AxisSize(axes, axes.tp) <= 1) return groups;
  std::map<std::vector<int32_t>, size_t> index;
  for (const RankPlacement* r : ranks) {
    auto [it, inserted] = index.emplace(CoordsWithout(*r, axes.tp), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

// (rank, successor) pairs among `ranks`: the successor has the same coordinates on every axis
// but pp and the next stage.
std::vector<std::pair<int32_t, int32_t>> PipelineEdges(
    const std::vector<const RankPlacement*>& ranks, const MeshAxes& axes) {
  std::map<std::pair<std::vector<int32_t>, int32_t>, int32_t> by_position;
  for (const RankPlacement* r : ranks) {
    by_position.emplace(std::make_pair(CoordsWithout(*r, axes.pp), r->stage()), r->rank());
  }
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (const RankPlacement* r : ranks) {
    auto it = by_position.find(std::make_pair(CoordsWithout(*r, axes.pp), r->stage() + 1));
    if (it != by_position.end()) edges.emplace_back(r->rank(), it->second);
  }
  return edges;
}

// Keeps the ranks of one node and stage in rank order from left to right: dot would otherwise
// be free to mirror the row. Invisible edges of length 0 between neighbours become flat edges,
// which dot draws pointing right.
void AppendRowOrder(const std::vector<const RankPlacement*>& ranks, std::string* out) {
  for (size_t i = 0; i + 1 < ranks.size(); ++i) {
    const RankPlacement& a = *ranks[i];
    const RankPlacement& b = *ranks[i + 1];
    if (a.node() != b.node() || a.stage() != b.stage()) continue;
    absl::StrAppend(out, "    ", RankId(a.rank()), " -> ", RankId(b.rank()),
                    " [style=invis, minlen=0];\n");
  }
}

// One node cluster: its ranks, tp groups inside it as dashed clusters. Returns the tp groups
// that leave the node (drawn as dashed lines by the caller).
std::vector<std::vector<const RankPlacement*>> AppendNodeCluster(
    int32_t node, std::string_view label, const std::vector<const RankPlacement*>& ranks,
    const std::vector<std::vector<const RankPlacement*>>& tp_groups, const MeshAxes& axes,
    std::string* out) {
  absl::StrAppend(out, "    subgraph cluster_node", node, " {\n", "      label=\"",
                  EscapeDot(label),
                  "\"; style=\"rounded\"; color=\"#666666\"; fontsize=11; margin=8;\n");
  std::set<int32_t> in_tp_cluster;
  std::vector<std::vector<const RankPlacement*>> spanning;
  // dot tends to mirror sibling clusters relative to their input order (the invisible flat
  // edges fix the order inside a cluster only), so they are written last to first.
  for (auto it = tp_groups.rbegin(); it != tp_groups.rend(); ++it) {
    const auto& group = *it;
    if (group.size() < 2 || group.front()->node() != node) continue;
    bool same_node = std::all_of(group.begin(), group.end(),
                                 [&](const RankPlacement* r) { return r->node() == node; });
    if (!same_node) {
      spanning.push_back(group);
      continue;
    }
    absl::StrAppend(out, "      subgraph cluster_tp_r", group.front()->rank(),
                    " {\n        label=\"\"; style=\"dashed,rounded\"; color=\"#222222\"; "
                    "margin=5;\n");
    for (const RankPlacement* r : group) {
      absl::StrAppend(out, "        ", RankBox(*r, axes));
      in_tp_cluster.insert(r->rank());
    }
    absl::StrAppend(out, "      }\n");
  }
  for (const RankPlacement* r : ranks) {
    if (!in_tp_cluster.count(r->rank())) absl::StrAppend(out, "      ", RankBox(*r, axes));
  }
  absl::StrAppend(out, "    }\n");
  return spanning;
}

std::string MeshTitle(const Plan& plan, const MeshAxes& axes, int64_t node_count) {
  int64_t world = plan.ranks_size();
  std::string title = absl::StrCat("device mesh · ", FormatCount(world), world == 1 ? " rank" : " ranks");
  int64_t per_node = plan.topology().devices_per_node();
  if (node_count > 0 && per_node > 0) {
    absl::StrAppend(&title, " = ", FormatCount(node_count), node_count == 1 ? " node" : " nodes",
                    " × ", per_node);
  }
  std::vector<std::string> degrees;
  for (size_t i = 0; i < axes.names.size(); ++i) {
    if (axes.sizes[i] > 1) degrees.push_back(absl::StrCat(axes.names[i], " ", axes.sizes[i]));
  }
  if (!degrees.empty()) absl::StrAppend(&title, " · ", absl::StrJoin(degrees, " × "));
  return title;
}

// The legend as one HTML-like table node.
void AppendMeshLegend(const Plan& plan, const MeshAxes& axes, std::string* out) {
  int64_t stages = StageCount(plan, axes);
  std::string rows;
  if (stages <= static_cast<int64_t>(kStageColors.size())) {
    for (int64_t s = 0; s < stages; ++s) {
      std::string contents = StageContents(plan, s);
      absl::StrAppend(&rows, "<TR><TD BGCOLOR=\"", StageColor(s), "\" WIDTH=\"18\"></TD>",
                      "<TD ALIGN=\"LEFT\">stage ", s,
                      contents.empty() ? "" : absl::StrCat(": ", EscapeHtml(contents)),
                      "</TD></TR>");
    }
  } else {
    for (size_t c = 0; c < kStageColors.size(); ++c) {
      std::vector<std::string> listed;
      int64_t s = static_cast<int64_t>(c);
      for (; s < stages && listed.size() < 3; s += static_cast<int64_t>(kStageColors.size())) {
        listed.push_back(absl::StrCat(s));
      }
      if (s < stages) listed.push_back("…");
      absl::StrAppend(&rows, "<TR><TD BGCOLOR=\"", kStageColors[c], "\" WIDTH=\"18\"></TD>",
                      "<TD ALIGN=\"LEFT\">stages ", absl::StrJoin(listed, ", "), "</TD></TR>");
    }
  }
  if (stages > 1) {
    absl::StrAppend(&rows,
                    "<TR><TD>→</TD><TD ALIGN=\"LEFT\">pipeline successor (same coordinates, "
                    "next stage)</TD></TR>");
  }
  if (AxisSize(axes, axes.tp) > 1) {
    absl::StrAppend(&rows, "<TR><TD>- - -</TD><TD ALIGN=\"LEFT\">dashed box: tensor-parallel "
                           "group (tp ",
                    AxisSize(axes, axes.tp), ")</TD></TR>");
  }
  std::vector<std::string> keys;
  for (size_t i = 0; i < axes.names.size(); ++i) {
    if (axes.sizes[i] <= 1) continue;
    absl::string_view short_name = AxisShortName(axes.names[i]);
    keys.push_back(short_name == axes.names[i]
                       ? axes.names[i]
                       : absl::StrCat(short_name, " = ", axes.names[i]));
  }
  if (!keys.empty()) {
    absl::StrAppend(&rows, "<TR><TD></TD><TD ALIGN=\"LEFT\">coordinates: ",
                    EscapeHtml(absl::StrJoin(keys, ", ")), "</TD></TR>");
  }
  absl::StrAppend(out,
                  "    mesh_legend [shape=plain, style=\"\", label=<<TABLE BORDER=\"0\" "
                  "CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"#888888\">"
                  "<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><B>legend</B></TD></TR>",
                  rows, "</TABLE>>];\n");
}

struct StageSummary {
  int64_t rank_count = 0;
  int32_t first_rank = 0;
  int32_t last_rank = 0;
  std::set<int32_t> nodes;
};

// The mesh body (nodes, clusters, edges; no graph header). Returns the id of a node drawn at
// the bottom, so PlanToDot can put the schedule underneath.
std::string AppendMeshBody(const Plan& plan, std::string* out) {
  MeshAxes axes = ReadAxes(plan);
  if (plan.ranks_size() == 0) {
    absl::StrAppend(out, "    mesh_empty [shape=plain, style=\"\", label=\"no ranks placed in "
                         "this plan (the build-mesh pass has not run)\"];\n");
    return "mesh_empty";
  }
  // Ranks by node, in rank order (RankPlacement is ordered by rank; sorting keeps the output
  // independent of that).
  std::vector<const RankPlacement*> all;
  all.reserve(static_cast<size_t>(plan.ranks_size()));
  for (const RankPlacement& r : plan.ranks()) all.push_back(&r);
  std::stable_sort(all.begin(), all.end(), [](const RankPlacement* a, const RankPlacement* b) {
    return a->rank() < b->rank();
  });

  if (plan.ranks_size() <= kMeshMaxFullRanks) {
    std::map<int32_t, std::vector<const RankPlacement*>> by_node;
    for (const RankPlacement* r : all) by_node[r->node()].push_back(r);
    std::vector<std::vector<const RankPlacement*>> tp_groups = TpGroups(all, axes);
    std::vector<std::vector<const RankPlacement*>> spanning;
    // Written last to first like the tp clusters inside them: dot mirrors sibling clusters
    // relative to their input order, and this keeps node 0 on the left.
    for (auto it = by_node.rbegin(); it != by_node.rend(); ++it) {
      auto more = AppendNodeCluster(it->first, absl::StrCat("node ", it->first), it->second,
                                    tp_groups, axes, out);
      spanning.insert(spanning.end(), more.begin(), more.end());
    }
    AppendMeshLegend(plan, axes, out);
    for (const auto& [from, to] : PipelineEdges(all, axes)) {
      absl::StrAppend(out, "    ", RankId(from), " -> ", RankId(to), ";\n");
    }
    for (const auto& group : spanning) {
      for (size_t i = 0; i + 1 < group.size(); ++i) {
        absl::StrAppend(out, "    ", RankId(group[i]->rank()), " -> ", RankId(group[i + 1]->rank()),
                        " [dir=none, style=dashed, constraint=false];\n");
      }
    }
    AppendRowOrder(all, out);
    // Lay the nodes out as a grid. A level is a run of nodes holding the same stages; it is
    // wrapped into rows of at most kMeshMaxRowRanks ranks (at least one node), and each row
    // starts below the row above it (the previous row of its level, or the last row of the
    // previous level): every node is held under the node in the same column one row up by an
    // invisible edge. Without this a wide data-parallel level is one very long row and the
    // levels interleave.
    using NodeRanks = const std::vector<const RankPlacement*>*;
    std::vector<std::vector<NodeRanks>> levels;
    std::vector<int32_t> level_stages;
    for (const auto& [node, ranks] : by_node) {
      std::vector<int32_t> stages;
      for (const RankPlacement* r : ranks) stages.push_back(r->stage());
      std::sort(stages.begin(), stages.end());
      stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
      if (levels.empty() || stages != level_stages) levels.emplace_back();
      level_stages = std::move(stages);
      levels.back().push_back(&ranks);
    }
    std::vector<NodeRanks> row_above;
    for (const std::vector<NodeRanks>& level : levels) {
      size_t per_row = std::max<size_t>(
          1, static_cast<size_t>(kMeshMaxRowRanks) / std::max<size_t>(1, level.front()->size()));
      for (size_t begin = 0; begin < level.size(); begin += per_row) {
        std::vector<NodeRanks> row(level.begin() + static_cast<std::ptrdiff_t>(begin),
                                   level.begin() + static_cast<std::ptrdiff_t>(
                                                       std::min(level.size(), begin + per_row)));
        for (size_t c = 0; c < row.size() && c < row_above.size(); ++c) {
          // From first rank to first rank (dot keeps the rows' left-to-right order better than
          // with last-to-first), as many dot ranks down as the node above spans stages.
          const RankPlacement& above = *row_above[c]->front();
          int32_t span = row_above[c]->back()->stage() - above.stage() + 1;
          absl::StrAppend(out, "    ", RankId(above.rank()), " -> ",
                          RankId(row[c]->front()->rank()), " [style=invis",
                          span > 1 ? absl::StrCat(", minlen=", span) : "", "];\n");
        }
        row_above = std::move(row);
      }
    }
    return RankId(all.back()->rank());
  }

  // Summary: node 0 in full, then one box per stage. One pass over the ranks, output
  // independent of the world size.
  int32_t first_node = all.front()->node();
  std::vector<const RankPlacement*> first_node_ranks;
  std::map<int32_t, StageSummary> stages;
  std::set<int32_t> nodes;
  for (const RankPlacement* r : all) {
    if (r->node() == first_node) first_node_ranks.push_back(r);
    nodes.insert(r->node());
    StageSummary& s = stages[r->stage()];
    if (s.rank_count == 0) s.first_rank = r->rank();
    s.last_rank = r->rank();
    ++s.rank_count;
    s.nodes.insert(r->node());
  }
  std::string top_id;
  if (static_cast<int>(first_node_ranks.size()) <= kMeshMaxFullRanks) {
    AppendNodeCluster(first_node, absl::StrCat("node ", first_node, " in full"), first_node_ranks,
                      TpGroups(first_node_ranks, axes), axes, out);
    for (const auto& [from, to] : PipelineEdges(first_node_ranks, axes)) {
      absl::StrAppend(out, "    ", RankId(from), " -> ", RankId(to), ";\n");
    }
    AppendRowOrder(first_node_ranks, out);
    top_id = RankId(first_node_ranks.back()->rank());
  }
  AppendMeshLegend(plan, axes, out);

  std::vector<int32_t> stage_ids;
  for (const auto& [stage, summary] : stages) stage_ids.push_back(stage);
  std::vector<std::string> chain;
  for (int64_t i : ElidedIndices(static_cast<int64_t>(stage_ids.size()), kScheduleMaxStages)) {
    if (i < 0) {
      int64_t skipped = static_cast<int64_t>(stage_ids.size()) - kScheduleMaxStages;
      int32_t after = stage_ids[kScheduleMaxStages / 2 - 1];
      absl::StrAppend(out, "    stage_elided [style=\"rounded,dashed\", label=\"…\\n", skipped,
                      " more stages (", RangeText(after + 1, after + skipped), ")\"];\n");
      chain.push_back("stage_elided");
      continue;
    }
    int32_t stage = stage_ids[static_cast<size_t>(i)];
    const StageSummary& s = stages[stage];
    std::string label = absl::StrCat("stage ", stage, "\\nranks ", RangeText(s.first_rank, s.last_rank),
                                     " (", FormatCount(s.rank_count), ")\\nnodes ",
                                     RangeText(*s.nodes.begin(), *s.nodes.rbegin()), " (",
                                     FormatCount(static_cast<int64_t>(s.nodes.size())), ")");
    std::string contents = StageContents(plan, stage);
    if (!contents.empty()) absl::StrAppend(&label, "\\n", EscapeDot(contents));
    std::string id = absl::StrCat("stage", stage);
    absl::StrAppend(out, "    ", id, " [label=\"", label, "\", fillcolor=\"", StageColor(stage),
                    "\", margin=\"0.15,0.05\"];\n");
    chain.push_back(id);
  }
  absl::StrAppend(out, "    mesh_summary [shape=plain, style=\"\", label=\"",
                  FormatCount(plan.ranks_size()), " ranks on ",
                  FormatCount(static_cast<int64_t>(nodes.size())),
                  " nodes: too many to draw one box each.\\n",
                  top_id.empty() ? "" : "The first node is shown in full; ",
                  "each box below is one pipeline stage.\"];\n");
  if (!top_id.empty()) absl::StrAppend(out, "    ", top_id, " -> mesh_summary [style=invis];\n");
  absl::StrAppend(out, "    mesh_summary -> ", chain.front(), " [style=invis];\n");
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    absl::StrAppend(out, "    ", chain[i], " -> ", chain[i + 1], " [label=\" pp\"];\n");
  }
  return chain.back();
}

std::string MeshTitleFor(const Plan& plan) {
  std::set<int32_t> nodes;
  for (const RankPlacement& r : plan.ranks()) nodes.insert(r.node());
  int64_t node_count = plan.topology().nodes() > 0 ? plan.topology().nodes()
                                                   : static_cast<int64_t>(nodes.size());
  return MeshTitle(plan, ReadAxes(plan), node_count);
}

// ---------------------------------------------------------------------------------------------
// Schedule

// The op of a stage at `slot`, or null when the stage idles then (ops are sorted by slot).
const TimelineOp* OpAt(const std::vector<TimelineOp>& ops, int64_t slot) {
  auto it = std::lower_bound(ops.begin(), ops.end(), slot,
                             [](const TimelineOp& op, int64_t s) { return op.slot < s; });
  if (it == ops.end() || it->slot != slot) return nullptr;
  return &*it;
}

std::string ScheduleTitle(const Plan& plan) {
  const Pipeline& pipeline = plan.pipeline();
  std::string title = "pipeline schedule";
  if (pipeline.schedule() != PIPELINE_SCHEDULE_UNSPECIFIED) {
    absl::StrAppend(&title, " · ", std::string(Name(pipeline.schedule())));
  }
  absl::StrAppend(&title, " · ", pipeline.stages_size(),
                  pipeline.stages_size() == 1 ? " stage" : " stages");
  if (VirtualStages(pipeline) > 1) absl::StrAppend(&title, " × ", VirtualStages(pipeline), " chunks");
  if (pipeline.microbatches() > 0) {
    absl::StrAppend(&title, " × ", pipeline.microbatches(),
                    pipeline.microbatches() == 1 ? " microbatch" : " microbatches");
  }
  return title;
}

std::string HtmlCell(absl::string_view bgcolor, absl::string_view text, int64_t colspan = 1) {
  std::string cell = "<TD";
  if (!bgcolor.empty()) absl::StrAppend(&cell, " BGCOLOR=\"", bgcolor, "\"");
  if (colspan > 1) absl::StrAppend(&cell, " COLSPAN=\"", colspan, "\"");
  absl::StrAppend(&cell, ">", text, "</TD>");
  return cell;
}

// The schedule body: one plain node "schedule_table" holding the timeline table.
void AppendScheduleBody(const Plan& plan, std::string* out) {
  const Pipeline& pipeline = plan.pipeline();
  PipelineTimeline timeline = SimulatePipeline(pipeline);
  if (pipeline.stages_size() == 0 || timeline.busy_slots == 0) {
    std::string text = "no forward or backward ops in the pipeline schedule";
    if (pipeline.stages_size() == 0) {
      text = "no pipeline stages in this plan (the schedule-pipeline pass has not run)";
    } else if (!timeline.stall.empty()) {
      text = absl::StrCat("schedule stalls: ", timeline.stall);
    }
    absl::StrAppend(out, "    schedule_table [shape=plain, style=\"\", label=\"", EscapeDot(text),
                    "\"];\n");
    return;
  }
  int64_t stage_count = pipeline.stages_size();
  const bool interleaved = VirtualStages(pipeline) > 1;
  std::vector<int64_t> columns = ElidedIndices(timeline.makespan_slots, kScheduleMaxSlots);
  std::vector<int64_t> rows = ElidedIndices(stage_count, kScheduleMaxStages);
  bool sparse_numbers = columns.size() > 40;
  int64_t width = static_cast<int64_t>(columns.size()) + 2;

  std::string grid =
      "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"2\" "
      "COLOR=\"#999999\">";
  // Header: slot numbers (every fifth on wide tables).
  absl::StrAppend(&grid, "<TR><TD BORDER=\"0\" ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\">slot</FONT></TD>");
  for (int64_t slot : columns) {
    std::string text;
    if (slot < 0) {
      text = "…";
    } else if (!sparse_numbers || slot % 5 == 0) {
      text = absl::StrCat(slot);
    }
    absl::StrAppend(&grid, text.empty() ? "<TD BORDER=\"0\"></TD>"
                                        : absl::StrCat("<TD BORDER=\"0\"><FONT POINT-SIZE=\"8\">",
                                                       text, "</FONT></TD>"));
  }
  absl::StrAppend(&grid, "<TD BORDER=\"0\"><FONT POINT-SIZE=\"8\">busy</FONT></TD></TR>");

  for (int64_t row : rows) {
    if (row < 0) {
      int64_t first = kScheduleMaxStages / 2;
      int64_t last = stage_count - (kScheduleMaxStages - kScheduleMaxStages / 2) - 1;
      absl::StrAppend(&grid, "<TR>",
                      HtmlCell("", absl::StrCat("⋮ stages ", RangeText(first, last),
                                                " not shown"),
                               width),
                      "</TR>");
      continue;
    }
    const std::vector<TimelineOp>& ops = timeline.stages[static_cast<size_t>(row)];
    absl::StrAppend(&grid, "<TR><TD BGCOLOR=\"", StageColor(row), "\" ALIGN=\"LEFT\">stage ", row,
                    "</TD>");
    int64_t idle_run = 0;
    auto flush_idle = [&] {
      if (idle_run > 0) absl::StrAppend(&grid, HtmlCell(kIdleColor, "", idle_run));
      idle_run = 0;
    };
    for (int64_t slot : columns) {
      if (slot < 0) {
        flush_idle();
        absl::StrAppend(&grid, HtmlCell("", "…"));
        continue;
      }
      const TimelineOp* op = OpAt(ops, slot);
      if (op == nullptr) {
        ++idle_run;
        continue;
      }
      flush_idle();
      // Interleaved: the shade tells the chunk, and the name carries it (F3c1).
      const auto& palette = op->kind == FORWARD ? kForwardColors : kBackwardColors;
      const int32_t shade = interleaved ? op->chunk : op->microbatch;
      absl::StrAppend(&grid, HtmlCell(palette[static_cast<size_t>(shade) % 2],
                                      PipelineOpName(op->kind, op->microbatch, interleaved ? op->chunk : -1)));
    }
    flush_idle();
    absl::StrAppend(&grid, "<TD BORDER=\"0\"><FONT POINT-SIZE=\"9\">", ops.size(), "/",
                    timeline.makespan_slots, "</FONT></TD></TR>");
  }
  absl::StrAppend(&grid, "</TABLE>");

  std::string stats = absl::StrCat("makespan ", timeline.makespan_slots, " slots · bubble ",
                                   Percent(timeline.bubble_fraction), " simulated");
  if (pipeline.bubble_fraction() > 0 || stage_count == 1) {
    absl::StrAppend(&stats, ", ", Percent(pipeline.bubble_fraction()), " planned ",
                    interleaved ? "(p−1)/(v·m+p−1)" : "(p−1)/(m+p−1)");
  }

  std::string legend = absl::StrCat(
      "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"4\" CELLPADDING=\"2\" "
      "COLOR=\"#999999\"><TR>",
      HtmlCell(kForwardColors[0], interleaved ? "F<I>m</I>c<I>k</I>" : "F<I>m</I>"),
      "<TD BORDER=\"0\">forward of microbatch m", interleaved ? " through chunk k" : "", "</TD>",
      HtmlCell(kBackwardColors[0], interleaved ? "B<I>m</I>c<I>k</I>" : "B<I>m</I>"),
      "<TD BORDER=\"0\">backward of microbatch m", interleaved ? " through chunk k" : "", "</TD>",
      HtmlCell(kIdleColor, "   "), "<TD BORDER=\"0\">idle (bubble)</TD></TR></TABLE>");

  std::vector<std::string> notes;
  if (columns.size() < static_cast<size_t>(timeline.makespan_slots)) {
    int64_t first = kScheduleMaxSlots / 2;
    int64_t last = timeline.makespan_slots - (kScheduleMaxSlots - kScheduleMaxSlots / 2) - 1;
    notes.push_back(absl::StrCat("slots ", RangeText(first, last), " of ", timeline.makespan_slots,
                                 " not shown"));
  }
  if (rows.size() < static_cast<size_t>(stage_count)) {
    notes.push_back(absl::StrCat("stages ", kScheduleMaxStages / 2, "–",
                                 stage_count - (kScheduleMaxStages - kScheduleMaxStages / 2) - 1,
                                 " not shown"));
  }
  if (!timeline.stall.empty()) {
    notes.push_back(absl::StrCat("schedule stalls: ", timeline.stall));
  }

  absl::StrAppend(out,
                  "    schedule_table [shape=plain, style=\"\", label=<<TABLE BORDER=\"0\" "
                  "CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"1\"><TR><TD ALIGN=\"LEFT\">",
                  EscapeHtml(stats), "</TD></TR><TR><TD>", grid, "</TD></TR><TR><TD ALIGN=\"LEFT\">",
                  legend, "</TD></TR>");
  for (const std::string& note : notes) {
    absl::StrAppend(out, "<TR><TD ALIGN=\"LEFT\"><FONT COLOR=\"#AA3377\">", EscapeHtml(note),
                    "</FONT></TD></TR>");
  }
  absl::StrAppend(out, "</TABLE>>];\n");
}

}  // namespace

std::string MeshToDot(const Plan& plan) {
  std::string out = "digraph mesh {\n";
  AppendDefaults(MeshTitleFor(plan), &out);
  AppendMeshBody(plan, &out);
  absl::StrAppend(&out, "}\n");
  return out;
}

std::string ScheduleToDot(const Plan& plan) {
  std::string out = "digraph schedule {\n";
  AppendDefaults(ScheduleTitle(plan), &out);
  AppendScheduleBody(plan, &out);
  absl::StrAppend(&out, "}\n");
  return out;
}

std::string PlanToDot(const Plan& plan) {
  std::string out = "digraph plan {\n";
  std::string title = "accel plan";
  if (!plan.job().name().empty()) absl::StrAppend(&title, " · ", plan.job().name());
  AppendDefaults(title, &out);
  absl::StrAppend(&out, "  subgraph cluster_mesh {\n    label=\"", EscapeDot(MeshTitleFor(plan)),
                  "\"; style=\"rounded\"; color=\"#BBBBBB\";\n");
  std::string bottom = AppendMeshBody(plan, &out);
  absl::StrAppend(&out, "  }\n  subgraph cluster_schedule {\n    label=\"",
                  EscapeDot(ScheduleTitle(plan)), "\"; style=\"rounded\"; color=\"#BBBBBB\";\n");
  AppendScheduleBody(plan, &out);
  absl::StrAppend(&out, "  }\n  ", bottom, " -> schedule_table [style=invis];\n}\n");
  return out;
}

}  // namespace accel::ir
