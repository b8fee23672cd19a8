#include "ir/plan_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/units.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"

namespace accel::ir {

std::string PlanToJson(const Plan& plan) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  // A plan is always serializable; a failure here would be a protobuf bug.
  (void)google::protobuf::util::MessageToJsonString(plan, &out, options);
  return out;
}

std::string PlanToTextproto(const Plan& plan) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(plan, &out);
  return out;
}

std::string PlanToBinary(const Plan& plan) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    plan.SerializeToCodedStream(&coded);
  }
  return out;
}

namespace {


// The spec's word for an enum value (ir/enum_names.h), as a string to concatenate.
template <typename E>
std::string N(E v) {
  return std::string(Name(v));
}

std::string Fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string GiB(int64_t bytes) { return Fmt("%.2f", static_cast<double>(bytes) / kGiB); }

std::string RankList(const RankGroup& group, int max_ranks) {
  const int n = group.ranks_size();
  std::string out = "[";
  if (n <= max_ranks) {
    for (int i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(group.ranks(i));
  } else {
    for (int i = 0; i < 3; ++i) out += std::to_string(group.ranks(i)) + ",";
    out += "…," + std::to_string(group.ranks(n - 1));
  }
  return out + "]";
}

// "none", or e.g. "full (12 modules: transformer.h.0 … transformer.h.11)", "op (12 modules:
// transformer.h.0 … transformer.h.11; keeping attn.c_attn, attn.core, mlp.c_fc)".
std::string RecomputeText(const Training& t) {
  const int n = t.recompute_modules_size();
  if (n == 0) return N(t.recompute());
  std::string text = N(t.recompute()) + " (" + std::to_string(n) + (n == 1 ? " module: " : " modules: ") +
                     t.recompute_modules(0);
  if (n > 1) text += (n > 2 ? " … " : ", ") + t.recompute_modules(n - 1);
  for (int i = 0; i < t.recompute_kept_outputs_size(); ++i) {
    text += (i == 0 ? "; keeping " : ", ") + t.recompute_kept_outputs(i);
  }
  return text + ")";
}

// Pads `text` to `width` display columns (the summary only uses ASCII and a few one-column
// symbols, so UTF-8 continuation bytes are not counted).
std::string Pad(const std::string& text, size_t width) {
  size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;
  return columns >= width ? text + " " : text + std::string(width - columns, ' ');
}

// Sum of a category's device terms (a category may have several, e.g. 16-bit gradients and
// their fp32 copy); -1 when the estimate has none.
int64_t CategoryBytes(const MemoryEstimate& m, const std::string& category) {
  int64_t total = -1;
  for (const MemoryTerm& t : m.device()) {
    if (t.category() == category) total = std::max<int64_t>(total, 0) + t.bytes();
  }
  return total;
}

// Seconds with three significant digits and a unit that keeps them readable: "1.23 s",
// "45.6 ms", "789 us".
std::string Seconds(double seconds) {
  if (seconds == 0) return "0 s";
  if (seconds >= 1) return Fmt("%.3g s", seconds);
  if (seconds >= 1e-3) return Fmt("%.3g ms", seconds * 1e3);
  return Fmt("%.3g us", seconds * 1e6);
}

std::string Si(double value, const char* unit) {
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (value >= 1000 && i < 6) {
    value /= 1000;
    ++i;
  }
  return Fmt("%.3g ", value) + kPrefixes[i] + unit;
}

// "; N% of the bubble hidden ..." when the estimate's bubble is below f / (1 − f) of the stage
// time (planner/step_time_estimator.h BubbleHiddenOnSharedCores), else "". `f`: the plan's
// bubble fraction, 0 without pipelining.
std::string HiddenBubbleNote(const StepTimeEstimate& e, double f) {
  if (f <= 0 || f >= 1) return "";
  const double whole = f / (1 - f) * (e.compute_seconds() + e.exposed_communication_seconds());
  if (whole <= 0 || e.bubble_seconds() >= whole * (1 - 1e-9)) return "";
  return Fmt("; %.0f%%", 100.0 * (1 - e.bubble_seconds() / whole)) +
         " of the bubble hidden: other workers take an idle stage's time-shared cores";
}

// The step-time block of the summary: total with tokens/s and MFU, the profile, the slowest
// stage's compute, each communication term and the bubble. `f`: the plan's bubble fraction.
std::string StepTimeSummary(const StepTimeEstimate& e, double f) {
  const DeviceProfile& p = e.profile();
  std::string out = "step time  " + Seconds(e.step_seconds()) + " per step (estimated), " +
                    FormatCount(static_cast<int64_t>(e.tokens_per_second() + 0.5)) +
                    " tokens/s, MFU " + Fmt("%.1f%%", 100.0 * e.mfu()) + " = compute " +
                    Seconds(e.compute_seconds()) + " + exposed communication " +
                    Seconds(e.exposed_communication_seconds()) + " + bubble " +
                    Seconds(e.bubble_seconds()) + " (stage " + std::to_string(e.slowest_stage()) +
                    HiddenBubbleNote(e, f) + ")\n";
  out += "  profile " + p.name() + (p.file().empty() ? "" : " (" + p.file() + ")") +
         ": matmul fp32 " + Si(p.matmul_fp32_flops_per_second(), "FLOP/s") + ", bf16 " +
         Si(p.matmul_bf16_flops_per_second(), "FLOP/s") + " x efficiency " +
         Fmt("%g", p.matmul_efficiency()) + "; memory " + Si(p.memory_bytes_per_second(), "B/s") +
         " x " + Fmt("%g", p.memory_efficiency()) + "; links " +
         Si(p.intra_node_bytes_per_second(), "B/s") + " / " +
         Seconds(p.intra_node_latency_seconds()) + " in a node, " +
         Si(p.inter_node_bytes_per_second(), "B/s") + " / " +
         Seconds(p.inter_node_latency_seconds()) + " across, x " + Fmt("%g", p.link_efficiency()) +
         (p.shared_cores_per_node() > 0 ? "; per core, " + std::to_string(p.shared_cores_per_node()) +
                                              " cores per node"
                                        : "") +
         (p.host_link_bytes_per_second() > 0
              ? "; host link " + Si(p.host_link_bytes_per_second(), "B/s") + ", host memory " +
                    Si(p.host_memory_bytes_per_second(), "B/s")
              : "") +
         (p.blocking_collective_seconds() > 0
              ? "; blocking tp collective +" + Seconds(p.blocking_collective_seconds())
              : "") +
         (p.adamw_seconds_per_parameter() > 0
              ? "; AdamW " + Fmt("%.3g", p.adamw_seconds_per_parameter() * 1e9) + " ns/parameter"
              : "") +
         (p.shared_core_bucket_overlap() > 0
              ? "; buckets " + Fmt("%.0f", p.shared_core_bucket_overlap() * 100) +
                    "% hidden on shared cores"
              : "") +
         "\n";
  out += "  source: " + p.source() + "\n";
  if (p.matmul_grids_size() > 0 || p.elementwise_costs_size() > 0 ||
      p.worker_scaling_size() > 0) {
    std::string grids;
    for (const MatmulGrid& g : p.matmul_grids()) {
      grids += std::string(grids.empty() ? "" : ", ") + std::string(Name(g.dtype())) + " " +
               std::string(Name(g.layout() == MATMUL_LAYOUT_UNSPECIFIED ? MATMUL_LAYOUT_NN
                                                                        : g.layout()));
    }
    std::string scaling;
    for (const WorkerScaling& w : p.worker_scaling()) {
      scaling += (scaling.empty() ? "" : ", ") + std::to_string(w.workers_per_node()) + " x " +
                 Fmt("%.2f", w.efficiency());
    }
    out += "  measured: matmul throughput by shape for " + (grids.empty() ? "no dtype" : grids) +
           "; " + std::to_string(p.elementwise_costs_size()) + " elementwise op costs" +
           (scaling.empty() ? "" : "; worker efficiency by workers per node " + scaling) + "\n";
  }
  for (const StageComputeTime& st : e.stages()) {
    out += "  compute stage " + std::to_string(st.stage()) + ": " + Seconds(st.seconds()) + " = matmul " +
           Seconds(st.matmul_seconds()) + " (forward " + Si(st.forward_flops(), "FLOP") +
           ", backward " + Si(st.backward_flops(), "FLOP") + ", recompute " +
           Si(st.recompute_flops(), "FLOP") + ") + memory " + Seconds(st.memory_seconds()) +
           " (" + Si(st.memory_bytes(), "B") + ")" +
           (st.elementwise_seconds() > 0
                ? " + measured elementwise ops " + Seconds(st.elementwise_seconds())
                : "") +
           (st.host_seconds() > 0 ? " + host optimizer step " + Seconds(st.host_seconds()) +
                                        " (" + Si(st.host_memory_bytes(), "B") + ")"
                                  : "") +
           (st.optimizer_seconds() > 0
                ? " + measured optimizer step " + Seconds(st.optimizer_seconds())
                : "") +
           "\n";
  }
  for (const CommunicationTime& c : e.communication()) {
    out += "  " + c.group() + " " + N(c.collective()) + " x" + std::to_string(c.calls()) + ": " +
           Seconds(c.seconds()) + ", exposed " + Seconds(c.exposed_seconds()) + " (" +
           Si(static_cast<double>(c.bytes()), "B") + " over " + std::to_string(c.group_size()) + " ranks, " +
           N(c.link()) + "; " + c.what() + ")\n";
  }
  return out;
}


// Appends "label      text" lines: the summary's two-column layout.
class SummaryLines {
 public:
  explicit SummaryLines(std::string& out) : out_(out) {}
  void operator()(const std::string& label, const std::string& text) {
    out_ += Pad(label, 11) + text + "\n";
  }

 private:
  std::string& out_;
};

// The mixture-of-experts line: experts, router, dense blocks, routing and expert parallelism.
std::string MoeText(const Model& m) {
  const MixtureOfExperts& moe = m.moe();
  std::string text = std::to_string(moe.num_experts()) + " routed experts, top-" +
                     std::to_string(moe.experts_per_token()) + " by " +
                     std::string(N(moe.router_scoring())) +
                     (moe.norm_topk_prob() ? " (renormalized)" : "") + ", expert ffn " +
                     std::to_string(moe.expert_ffn_size());
  if (moe.num_shared_experts() > 0) {
    text += ", " + std::to_string(moe.num_shared_experts()) + " shared expert(s) of ffn " +
            std::to_string(moe.shared_expert_ffn_size()) + (moe.shared_expert_gate() ? " (gated)" : "");
  }
  text += "; " + std::to_string(m.num_layers() - moe.dense_layers_size()) + " of " +
          std::to_string(m.num_layers()) + " blocks MoE";
  if (moe.router_aux_loss_coef() > 0) text += ", aux loss " + Fmt("%g", moe.router_aux_loss_coef());
  text += moe.capacity_factor() > 0 ? ", capacity factor " + Fmt("%g", moe.capacity_factor())
                                    : ", dropless (planned at " + Fmt("%g", moe.routing_margin()) +
                                          "x the even share)";
  const int64_t ep = std::max<int64_t>(moe.expert_parallel(), 1);
  const int64_t per_rank = moe.num_experts() / ep;
  text += "; expert parallel " + std::to_string(ep) + " (" + std::to_string(per_rank) +
          (per_rank == 1 ? " expert" : " experts") + " per rank), expert states sharded over ep_dp " +
          std::to_string(moe.expert_data_parallel());
  return text;
}

// The block line of a llama-family model whose block departs from Llama's: the head width and
// q/k norms (Qwen3, OLMo 2, Gemma 3), the norms' placement and form, the MLP's gate, embedding
// scaling, score scaling and soft-capping, sliding windows; "" for Llama's own block.
std::string BlockText(const Model& m) {
  std::vector<std::string> parts;
  if (m.head_dim() > 0 && m.num_heads() > 0 && m.head_dim() * m.num_heads() != m.hidden_size()) {
    parts.push_back("head_dim " + std::to_string(m.head_dim()));
  }
  if (m.qk_norm()) parts.push_back(m.qk_norm_full_width() ? "q/k norm over the full width" : "q/k norm per head");
  if (m.norm_placement() == NORM_PLACEMENT_POST) parts.push_back("norms after attention and mlp only");
  if (m.norm_placement() == NORM_PLACEMENT_PRE_AND_POST) parts.push_back("norms before and after attention and mlp");
  if (m.norm_unit_offset()) parts.push_back("rmsnorm x*(1+w)");
  if (m.mlp_activation() == MLP_ACTIVATION_GELU_TANH) parts.push_back("geglu (gelu tanh)");
  if (m.embedding_scale() > 0) parts.push_back("embeddings x " + Fmt("%g", m.embedding_scale()));
  if (m.query_pre_attn_scalar() > 0) parts.push_back("scores x " + Fmt("%g", m.query_pre_attn_scalar()) + "^-0.5");
  if (m.attn_logit_softcapping() > 0) parts.push_back("scores capped at " + Fmt("%g", m.attn_logit_softcapping()));
  if (m.final_logit_softcapping() > 0) parts.push_back("logits capped at " + Fmt("%g", m.final_logit_softcapping()));
  if (m.sliding_window_layers_size() > 0) {
    std::string text = "sliding window " + std::to_string(m.sliding_window()) + " in " +
                       std::to_string(m.sliding_window_layers_size()) + " of " + std::to_string(m.num_layers()) +
                       " blocks";
    if (m.rope_local_theta() > 0) text += " (rope theta " + Fmt("%g", m.rope_local_theta()) + ")";
    parts.push_back(text);
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

void AppendModel(const Plan& plan, SummaryLines& line) {
  const Model& m = plan.model();
  std::string model = N(m.arch());
  if (!m.model_type().empty() && m.model_type() != model) model += " (" + m.model_type() + ")";
  model += ": hidden " + std::to_string(m.hidden_size()) + ", layers " + std::to_string(m.num_layers()) + ", heads " +
           std::to_string(m.num_heads());
  if (m.num_kv_heads() != m.num_heads()) {
    model += " (kv " + std::to_string(m.num_kv_heads());
    if (m.kv_head_replicas() > 1) model += ", each on " + std::to_string(m.kv_head_replicas()) + " tp ranks";
    model += ")";
  }
  model += ", ffn " + std::to_string(m.ffn_hidden_size()) + ", vocab " + std::to_string(m.vocab_size());
  if (m.padded_vocab_size() != m.vocab_size()) model += " (padded " + std::to_string(m.padded_vocab_size()) + ")";
  model += ", max_seq_len " + std::to_string(m.max_seq_len());
  line("model", model);
  if (m.arch() == ARCHITECTURE_LLAMA && !BlockText(m).empty()) line("block", BlockText(m));
  if (m.moe().num_experts() > 0) line("moe", MoeText(m));
  const ParameterCount& c = m.parameters();
  std::string params = FormatCount(c.total_count()) + " parameters";
  if (c.active_count() > 0) params += " (" + FormatCount(c.active_count()) + " active per token)";
  params += " = embedding " + FormatCount(c.embedding_count());
  if (c.position_embedding_count()) params += " + positions " + FormatCount(c.position_embedding_count());
  const int64_t dense_blocks = m.moe().dense_layers_size();
  if (m.moe().num_experts() > 0 && dense_blocks > 0) {
    params += " + " + std::to_string(m.num_layers() - dense_blocks) + " MoE x " +
              FormatCount(c.per_layer_count()) + " + " + std::to_string(dense_blocks) + " dense x " +
              FormatCount(c.dense_per_layer_count());
  } else {
    params += " + " + std::to_string(m.num_layers()) + " x " + FormatCount(c.per_layer_count());
  }
  params += " + norm " + FormatCount(c.final_norm_count());
  params += c.lm_head_count() ? " + lm_head " + FormatCount(c.lm_head_count()) : " (head tied)";
  line("", params);
}

// Batch, training, precision, topology, data and checkpoint: one line each.
void AppendJob(const Plan& plan, SummaryLines& line) {
  const Batch& b = plan.batch();
  line("batch", "global " + std::to_string(b.global_batch_size()) + " = micro " + std::to_string(b.micro_batch_size()) +
                    " x dp " + std::to_string(b.data_parallel_size()) + " x accumulation " +
                    std::to_string(b.grad_accum_steps()) + "; seq_len " + std::to_string(b.seq_len()) + "; " +
                    FormatCount(b.tokens_per_step()) + " tokens/step; " + std::to_string(b.steps()) +
                    " steps (" + FormatCount(b.total_tokens()) + " tokens)");
  const Training& t = plan.training();
  line("training", N(t.optimizer().kind()) + " lr " + Fmt("%g", t.optimizer().lr()) + ", " +
                       N(t.lr_schedule().kind()) + " schedule, warmup " +
                       std::to_string(t.lr_schedule().warmup_steps()) + ", clip " +
                       Fmt("%g", t.grad_clip_norm()) + ", recompute " + RecomputeText(t) +
                       ", loss in " + std::to_string(t.loss_chunks()) + (t.loss_chunks() == 1 ? " chunk" : " chunks") +
                       ", seed " + std::to_string(t.seed()));
  const Precision& p = plan.precision();
  line("precision", "params " + N(p.param_dtype()) + ", compute " + N(p.compute_dtype()) +
                        ", reduce " + N(p.reduce_dtype()) +
                        (p.master_dtype() == DTYPE_UNSPECIFIED ? "" : ", master " + N(p.master_dtype())) +
                        ", loss scaling " + N(p.loss_scaling()));
  const Topology& topo = plan.topology();
  std::string device = N(topo.device_type());
  if (!topo.device_model().empty()) device += " " + topo.device_model();
  line("topology", std::to_string(topo.nodes()) + " node(s) x " + std::to_string(topo.devices_per_node()) + " " + device +
                       " (" + FormatBytes(topo.device_memory_bytes()) + " each) = " +
                       std::to_string(topo.world_size()) + " ranks, backend " + N(plan.job().backend()));
  const Data& data = plan.data();
  line("data", data.path() + " (" + N(data.format()) + ", tokenizer " + N(data.tokenizer()) +
                   (data.tokenizer_path().empty() ? "" : " " + data.tokenizer_path()) + ")");
  const Checkpoint& ckpt = plan.checkpoint();
  line("checkpoint", ckpt.dir() + ", every " + std::to_string(ckpt.every_steps()) + " steps, keep " +
                         std::to_string(ckpt.keep()) + ", resume " + N(ckpt.resume()) +
                         (ckpt.skip_final() ? ", none at the end" : ""));
}

// The process-group sets worth a line: trivial ones (groups of one rank) left out, and sets
// with identical groups (e.g. dp and dp_shard when dp_replicate is 1) named together "a = b".
std::vector<std::pair<const ProcessGroupSet*, std::string>> ShownGroupSets(const Plan& plan) {
  std::vector<std::pair<const ProcessGroupSet*, std::string>> shown;
  for (const ProcessGroupSet& set : plan.process_groups()) {
    if (set.groups_size() == 0) continue;
    if (set.groups(0).ranks_size() == 1 && set.name() != "world") continue;  // trivial axis
    bool merged = false;
    for (auto& [other, name] : shown) {
      if (other->groups_size() != set.groups_size()) continue;
      bool same = true;
      for (int g = 0; g < set.groups_size() && same; ++g) {
        same = std::equal(set.groups(g).ranks().begin(), set.groups(g).ranks().end(),
                          other->groups(g).ranks().begin(), other->groups(g).ranks().end());
      }
      if (same) {
        name += " = " + set.name();
        merged = true;
        break;
      }
    }
    if (!merged) shown.emplace_back(&set, set.name());
  }
  return shown;
}

// Mixture of experts: which routed experts the ranks hold (RankPlacement.expert_begin/end), one
// line per distinct range: "experts 0–3: [0,1,2,…,60]".
void AppendExpertHoldings(const Plan& plan, const SummaryOptions& options, SummaryLines& line) {
  if (plan.model().moe().num_experts() <= 0) return;
  std::vector<std::pair<std::pair<int32_t, int32_t>, RankGroup>> ranges;
  for (const RankPlacement& r : plan.ranks()) {
    const std::pair<int32_t, int32_t> range{r.expert_begin(), r.expert_end()};
    auto it = std::find_if(ranges.begin(), ranges.end(),
                           [&](const auto& entry) { return entry.first == range; });
    if (it == ranges.end()) it = ranges.insert(ranges.end(), {range, RankGroup()});
    it->second.add_ranks(r.rank());
  }
  const int shown = std::min<int>(static_cast<int>(ranges.size()), options.max_groups_shown);
  for (int i = 0; i < shown; ++i) {
    const auto& [range, group] = ranges[i];
    line(i == 0 ? "experts" : "", ExpertRangeText(range.first, range.second) + " on ranks " +
                                      RankList(group, options.max_ranks_in_group));
  }
  if (static_cast<int>(ranges.size()) > shown) {
    line("", "… " + std::to_string(ranges.size() - shown) + " more expert ranges");
  }
}

// "context  ring over cp 2: seq_len 1024 in 4 chunks of 256; cp rank 0 chunks 0,3; cp rank 1 chunks 1,2".
void AppendContextParallel(const Plan& plan, SummaryLines& line) {
  const ContextParallel& cp = plan.mesh().context_parallel();
  if (cp.ranks_size() == 0) return;
  std::string text = std::string(Name(cp.method())) + " over cp " + std::to_string(cp.ranks_size()) +
                     ": seq_len " + std::to_string(plan.batch().seq_len()) + " in " +
                     std::to_string(cp.chunks()) + " chunks of " +
                     std::to_string(plan.batch().seq_len() / std::max<int64_t>(cp.chunks(), 1));
  for (int c = 0; c < cp.ranks_size(); ++c) {
    std::string chunks;
    for (int64_t chunk : cp.ranks(c).chunks()) chunks += (chunks.empty() ? "" : ",") + std::to_string(chunk);
    text += "; cp rank " + std::to_string(c) + " chunks " + chunks;
  }
  line("context", text);
}

void AppendMesh(const Plan& plan, const SummaryOptions& options, SummaryLines& line) {
  std::string mesh, strides;
  for (const MeshAxis& a : plan.mesh().axes()) {
    mesh += (mesh.empty() ? "" : " x ") + a.name() + " " + std::to_string(a.size());
    strides += (strides.empty() ? "" : ", ") + std::to_string(a.stride());
  }
  line("mesh", mesh + "  (strides " + strides + ")" +
                   (plan.mesh().sequence_parallel() ? "; sequence parallel over tp" : ""));
  AppendContextParallel(plan, line);
  for (const auto& [set, name] : ShownGroupSets(plan)) {
    const int size = set->groups(0).ranks_size();
    std::string text = name + ": " + std::to_string(set->groups_size()) + " x " + std::to_string(size) + " ";
    const int shown = std::min(set->groups_size(), options.max_groups_shown);
    for (int i = 0; i < shown; ++i) {
      text += (i ? " " : "") + RankList(set->groups(i), options.max_ranks_in_group);
    }
    if (set->groups_size() > shown) text += " … " + std::to_string(set->groups_size() - shown) + " more";
    line("groups", text);
  }
  AppendExpertHoldings(plan, options, line);
}

// One stage's line: its blocks, parameters, what else it holds, and activations in flight.
std::string StageText(const Plan& plan, const PipelineStage& s) {
  std::string text = "stage " + std::to_string(s.index()) + ": layers " + StageLayersText(s) + ", " +
                     FormatCount(s.parameter_count()) + " params";
  if (s.has_embedding()) text += ", embedding";
  if (s.has_lm_head()) text += ", head + loss";
  if (s.has_lm_head() && !s.has_embedding()) {
    for (const ShardUnit& unit : plan.sharding().units()) {
      for (const Parameter& p : unit.parameters()) {
        if (!p.tied_to().empty()) text += " (" + p.name() + ": a copy of tied " + p.tied_to() + ")";
      }
    }
  }
  text += ", " + std::to_string(s.max_inflight_microbatches()) +
          (s.chunks_size() > 0 ? " chunk activation(s) in flight" : " microbatch(es) in flight");
  // Zero-bubble schedules: weight gradients waiting for their W (their memory term says what).
  if (s.max_pending_weight_grads() > 0) {
    text += ", " + std::to_string(s.max_pending_weight_grads()) + " weight gradient(s) pending";
  }
  return text;
}

void AppendPipelineAndSharding(const Plan& plan, SummaryLines& line) {
  const Pipeline& pipe = plan.pipeline();
  if (pipe.stages_size() > 1) {
    std::string shape;
    for (int64_t d : pipe.activation_shape()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    const std::string chunks =
        VirtualStages(pipe) > 1 ? " with " + std::to_string(VirtualStages(pipe)) + " model chunks per stage" : "";
    line("pipeline", N(pipe.schedule()) + chunks + ", " + std::to_string(pipe.microbatches()) + " microbatches, bubble " +
                         Fmt("%.1f%%", 100.0 * pipe.bubble_fraction()) + "; stages exchange [" +
                         shape + "] " + N(pipe.activation_dtype()) + " activations and gradients");
  } else {
    line("pipeline", "none (one stage); " + std::to_string(pipe.microbatches()) +
                         " micro-step(s) per optimizer step");
  }
  for (const PipelineStage& s : pipe.stages()) line("", StageText(plan, s));
  const Sharding& sh = plan.sharding();
  line("sharding", "stage " + std::to_string(sh.stage()) + " over dp_shard " + std::to_string(sh.degree()) +
                       (sh.hybrid() ? " (hybrid)" : "") + ", offload " + N(sh.offload()) + "; " +
                       std::to_string(sh.units_size()) + " shard units, " + std::to_string(sh.buckets_size()) +
                       " buckets of <= " + FormatCount(sh.bucket_elements()) + " elements");
}

// The per-stage memory table, GiB by category; nothing when the plan has no estimate.
std::string MemoryTable(const Plan& plan) {
  if (plan.memory_size() == 0) return "";
  std::string out = "memory per rank (GiB; every rank of a stage holds the same)\n";
  static const std::pair<const char*, const char*> kColumns[] = {
      {"parameters", "params"},     {"gradients", "grads"},
      {"master_weights", "master"}, {"optimizer_states", "optim"},
      {"activations", "activ"},     {"logits", "logits"},
      {"communication_buffers", "comm"}, {"runtime_overhead", "runtime"}};
  std::string header = "  " + Pad("stage", 7);
  for (const auto& [category, label] : kColumns) header += Pad(label, 9);
  header += Pad("total", 9) + Pad("limit", 9) + Pad("host", 8) + "fits";
  out += header + "\n";
  for (const MemoryEstimate& e : plan.memory()) {
    std::string row = "  " + Pad(std::to_string(e.stage()), 7);
    for (const auto& [category, label] : kColumns) {
      const int64_t bytes = CategoryBytes(e, category);
      row += Pad(bytes >= 0 ? GiB(bytes) : "-", 9);
    }
    row += Pad(GiB(e.device_total_bytes()), 9) + Pad(GiB(e.device_limit_bytes()), 9) +
           Pad(GiB(e.host_total_bytes()), 8) + (e.fits() ? "yes" : "NO");
    out += row + "\n";
  }
  return out + "\n";
}

// Resolved values, then the planner's warnings and notes.
std::string ResolvedAndNotes(const Plan& plan) {
  std::string out;
  if (plan.resolved_size() > 0) {
    out += "resolved\n";
    for (const ResolvedValue& r : plan.resolved()) {
      out += "  " + Pad(r.field() + " = " + r.value(), 44) + r.reason() + "\n";
    }
    out += "\n";
  }
  for (const PlanNote& n : plan.notes()) {
    out += N(n.severity()) + (n.code().empty() ? "" : "[" + n.code() + "]") + ": " + n.message() +
           "\n";
  }
  return out;
}

}  // namespace

std::string PlanSummary(const Plan& plan, const SummaryOptions& options) {
  std::string out;
  SummaryLines line(out);
  const Job& job = plan.job();
  out += "plan " + job.name() + " (accel.ir v" + std::to_string(plan.ir_version()) + ", " + job.spec_file();
  for (const std::string& o : job.overrides()) out += ", --set " + o;
  out += ")\n\n";
  AppendModel(plan, line);
  AppendJob(plan, line);
  out += "\n";
  AppendMesh(plan, options, line);
  out += "\n";
  AppendPipelineAndSharding(plan, line);
  out += "\n";
  out += MemoryTable(plan);
  const double bubble_fraction =
      plan.pipeline().stages_size() > 1 ? plan.pipeline().bubble_fraction() : 0.0;
  if (plan.has_step_time()) out += StepTimeSummary(plan.step_time(), bubble_fraction) + "\n";
  return out + ResolvedAndNotes(plan);
}

}  // namespace accel::ir
