// resolve-auto: gives every `auto` a value and records why (plan.resolved), and checks the rules
// that need the resolved values: the mesh degrees against the world size, tensor/pipeline/context
// divisibility, the expert degree, batch arithmetic, pipeline microbatches, bucket sizes, device
// memory.
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "common/diag_codes.h"
#include "common/units.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/ir_enums.h"
#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "planner/moe_layers.h"
#include "planner/pass.h"
#include "planner/pipeline_schedules.h"
#include "spec/limits.h"

namespace accel::planner {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string Str(absl::uint128 v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// One mesh degree as the spec gave it, for arithmetic in messages: "tp(2)", "dp_replicate(auto→4)".
struct Degree {
  const char* axis;     // mesh axis name
  const char* field;    // spec field under parallel.
  spec::AutoOr<int64_t> given;
  int64_t value = 0;    // resolved; 0 while unknown

  std::string Show() const {
    if (!given.is_auto) return std::string(axis) + "(" + Str(given.value) + ")";
    if (value > 0) return std::string(axis) + "(auto→" + Str(value) + ")";
    return std::string(axis) + "(auto)";
  }
};

class ResolveAutoPass : public Pass {
 public:
  std::string_view name() const override { return "resolve-auto"; }

  void Run(PlanContext& context) override {
    errors_before_ = context.sink().error_count();
    if (!ResolveDegrees(context)) return;
    CheckLayout(context);
    ResolveVirtualStages(context);
    WarnFp16Reduce(context);
    ResolveBatch(context);
    ResolveSharding(context);
    ResolveTopology(context);
    ResolveLossChunks(context);
  }

 private:
  // Order used in messages (the and torchtitan's reading order) and in the mesh.
  std::vector<Degree> degrees_;
  int errors_before_ = 0;
  int64_t pp_ = 1, dp_replicate_ = 1, dp_shard_ = 1, cp_ = 1, tp_ = 1;
  int64_t v_ = 1;  // model chunks per stage (interleaved_1f1b, zbv)
  ir::PipelineSchedule schedule_ = ir::PIPELINE_SCHEDULE_1F1B;

  // parallel.virtual_stages: 2 model chunks per stage by default with interleaved_1f1b (half
  // the bubble for twice the point-to-point messages, Narayanan et al. 2021 §2.2.2), 1 without.
  // Every chunk needs a block, and a pipeline to interleave.
  void ResolveVirtualStages(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::AutoOr<int64_t>& v = s.parallel.virtual_stages;
    v_ = 1;
    schedule_ = ToIr(s.parallel.pipeline_schedule);
    if (s.parallel.pipeline_schedule == spec::PipelineSchedule::kZbv) {
      ResolveZbvChunks(context);
      return;
    }
    if (s.parallel.pipeline_schedule != spec::PipelineSchedule::kInterleaved1F1B) {
      if (!v.is_auto && v.value != 1) {
        Diagnostic& d = context.Warning(
            codes::kVirtualStagesWithoutInterleaving, "parallel.virtual_stages",
            "virtual_stages " + Str(v.value) + " has no effect: pipeline_schedule is " +
                spec::Name(s.parallel.pipeline_schedule) + ", not interleaved_1f1b");
        context.NoteField(d, "parallel.pipeline_schedule", "schedule set here");
      }
      return;
    }
    if (pp_ < 2) {
      Diagnostic& d = context.Error(codes::kBadVirtualStages, "parallel.pipeline_schedule",
                                    "interleaved_1f1b interleaves the chunks of several pipeline "
                                    "stages, but pipeline is " + Str(pp_));
      context.NoteField(d, "parallel.pipeline", "pipeline set here");
      return;
    }
    if (!v.is_auto && v.value < 2) {
      Diagnostic& d = context.Error(codes::kBadVirtualStages, "parallel.virtual_stages",
                                    "interleaved_1f1b needs at least 2 virtual_stages (model "
                                    "chunks per stage), got " + Str(v.value));
      d.Note("one chunk per stage is pipeline_schedule: 1f1b");
      return;
    }
    const int64_t chunks = v.is_auto ? 2 : v.value;
    const int64_t layers = s.model.num_layers;
    if (pp_ * chunks > layers) {
      Diagnostic& d = context.Error(
          codes::kBadVirtualStages, v.is_auto ? "parallel.pipeline_schedule" : "parallel.virtual_stages",
          "pipeline(" + Str(pp_) + ") * virtual_stages(" + Str(chunks) + ") = " + Str(pp_ * chunks) +
              " model chunks exceed num_layers " + Str(layers) + ": every chunk needs at least one layer");
      context.NoteField(d, "model.num_layers", "num_layers set here");
      return;
    }
    v_ = chunks;
    if (v.is_auto) {
      context.Resolve("parallel.virtual_stages", "2",
                      "interleaved_1f1b: 2 model chunks per stage halve the bubble of 1f1b "
                      "(Narayanan et al. 2021)");
    }
  }

  // zbv: exactly 2 model chunks per stage, in a V over at least 2 stages (Qi et al. 2023 §6;
  // PyTorch's ScheduleZBVZeroBubble refuses other chunk counts), each chunk a block or more.
  void ResolveZbvChunks(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::AutoOr<int64_t>& v = s.parallel.virtual_stages;
    if (pp_ < 2) {
      Diagnostic& d = context.Error(codes::kBadVirtualStages, "parallel.pipeline_schedule",
                                    "zbv runs 2 model chunks per stage in a V over several "
                                    "pipeline stages, but pipeline is " + Str(pp_));
      context.NoteField(d, "parallel.pipeline", "pipeline set here");
      return;
    }
    if (!v.is_auto && v.value != 2) {
      Diagnostic& d = context.Error(codes::kBadVirtualStages, "parallel.virtual_stages",
                                    "zbv runs exactly 2 virtual_stages (model chunks per stage), "
                                    "got " + Str(v.value));
      d.Note("more chunks per stage is pipeline_schedule: interleaved_1f1b");
      return;
    }
    if (2 * pp_ > s.model.num_layers) {
      Diagnostic& d = context.Error(
          codes::kBadVirtualStages, v.is_auto ? "parallel.pipeline_schedule" : "parallel.virtual_stages",
          "zbv splits the model into pipeline(" + Str(pp_) + ") * 2 = " + Str(2 * pp_) +
              " model chunks, more than num_layers " + Str(s.model.num_layers) +
              ": every chunk needs at least one layer");
      context.NoteField(d, "model.num_layers", "num_layers set here");
      return;
    }
    v_ = 2;
    if (v.is_auto) {
      context.Resolve("parallel.virtual_stages", "2",
                      "zbv: each stage runs 2 model chunks, down the pipeline and back (Qi et al. 2023 §6)");
    }
  }

  bool ResolveDegrees(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ParallelSpec& p = s.parallel;
    degrees_ = {{"dp_replicate", "data_replicate", p.data_replicate},
                {"dp_shard", "data_shard", p.data_shard},
                {"cp", "context", p.context},
                {"tp", "tensor", p.tensor},
                {"pp", "pipeline", p.pipeline}};
    const int64_t world = s.world_size();
    Degree* open = nullptr;
    // Each degree is at most kMaxParallelDegree (2^16), so five of them need 80 bits: the
    // product stays exact for the arithmetic shown in messages.
    absl::uint128 known_product = 1;
    for (Degree& d : degrees_) {
      if (d.given.is_auto) {
        open = open ? open : &d;  // validate-spec already rejected a second auto
      } else {
        d.value = d.given.value;
        known_product *= static_cast<uint64_t>(d.value);
      }
    }
    auto product_text = [&]() {
      std::string text;
      for (const Degree& d : degrees_) {
        if (std::string(d.axis) == "cp" && !d.given.is_auto && d.given.value == 1) continue;
        text += (text.empty() ? "" : " * ") + d.Show();
      }
      return text;
    };
    auto world_note = [&](Diagnostic& diag) {
      diag.Note(s.Locate("cluster.devices_per_node").file,
                s.Locate("cluster.devices_per_node").value,
                "world size = cluster.nodes(" + Str(s.cluster.nodes) +
                    ") * cluster.devices_per_node(" + Str(s.cluster.devices_per_node) + ") = " +
                    Str(world));
    };

    if (open != nullptr) {
      if (static_cast<uint64_t>(world) % known_product != 0) {
        std::string others;
        for (const Degree& d : degrees_) {
          if (&d == open || (std::string(d.axis) == "cp" && d.value == 1)) continue;
          others += (others.empty() ? "" : " * ") + d.Show();
        }
        Diagnostic& diag = context.Error(
            codes::kWorldSizeMismatch, std::string("parallel.") + open->field,
            "world size " + Str(world) + " is not divisible by " + others + " = " +
                Str(known_product) + ", so " + open->field + ": auto has no integer value");
        world_note(diag);
        return false;
      }
      open->value = world / static_cast<int64_t>(known_product);
      std::string others;
      for (const Degree& d : degrees_) {
        if (&d == open || (std::string(d.axis) == "cp" && d.value == 1)) continue;
        others += (others.empty() ? "" : " * ") + d.Show();
      }
      context.Resolve(std::string("parallel.") + open->field, Str(open->value),
                      "leftover ranks: world size " + Str(world) + " / (" + others + ") = " +
                          Str(open->value));
    } else if (known_product != static_cast<uint64_t>(world)) {
      Diagnostic& diag = context.Error(
          codes::kWorldSizeMismatch, "parallel",
          "parallel degrees do not multiply to the world size: " + product_text() + " = " +
              Str(known_product) + " != " + Str(world));
      world_note(diag);
      diag.Note("set one degree to auto to give it the leftover ranks");
      return false;
    }
    dp_replicate_ = degrees_[0].value;
    dp_shard_ = degrees_[1].value;
    cp_ = degrees_[2].value;
    tp_ = degrees_[3].value;
    pp_ = degrees_[4].value;

    ir::Mesh* mesh = context.plan().mutable_mesh();
    mesh->clear_axes();
    const std::pair<const char*, int64_t> axes[] = {
        {"pp", pp_}, {"dp_replicate", dp_replicate_}, {"dp_shard", dp_shard_}, {"cp", cp_},
        {"tp", tp_}};
    for (const auto& [axis, size] : axes) {
      ir::MeshAxis* a = mesh->add_axes();
      a->set_name(axis);
      a->set_size(size);
    }
    mesh->set_sequence_parallel(context.spec().parallel.sequence_parallel && tp_ > 1);
    if (cp_ > 1) SetContextParallel(context.spec().parallel.context_method, *mesh->mutable_context_parallel());
    return true;
  }

  // The chunk layout of ir::ContextParallel: ring, the head–tail split of 2·cp chunks (rank c
  // holds c and 2·cp − 1 − c: Megatron-LM's and torchtitan's causal load balancing); Ulysses,
  // cp chunks in order (its all-to-all gathers the whole sequence of some heads).
  void SetContextParallel(spec::ContextMethod method, ir::ContextParallel& out) const {
    out.set_method(ToIr(method));
    const bool ring = method == spec::ContextMethod::kRing;
    out.set_chunks(ring ? 2 * cp_ : cp_);
    for (int64_t c = 0; c < cp_; ++c) {
      ir::CpRankChunks* rank = out.add_ranks();
      rank->add_chunks(c);
      if (ring) rank->add_chunks(2 * cp_ - 1 - c);
    }
  }

  void CheckLayout(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ModelSpec& m = s.model;
    if (m.num_heads % tp_ != 0) {
      Diagnostic& d = context.Error(codes::kHeadsNotDivisible, "parallel.tensor",
                                    "tensor degree " + Str(tp_) + " does not divide num_heads " +
                                        Str(m.num_heads));
      context.NoteField(d, "model.num_heads", "num_heads set here");
    } else if (m.num_kv_heads % tp_ != 0 && ir::KvHeadReplicas(m.num_kv_heads, tp_) == 1) {
      Diagnostic& d = context.Error(codes::kKvHeadsNotDivisible, "parallel.tensor",
                                    "tensor degree " + Str(tp_) + " neither divides num_kv_heads " +
                                        Str(m.num_kv_heads) + " nor is a multiple of it");
      context.NoteField(d, "model.num_kv_heads", "num_kv_heads set here");
      d.Note("each tensor-parallel rank needs whole key/value heads, or one head replicated on "
             "tensor / num_kv_heads ranks (Megatron-LM: num_query_groups a multiple or divisor "
             "of the tensor degree)");
    }
    if (m.ffn_hidden_size > 0 && m.ffn_hidden_size % tp_ != 0) {
      Diagnostic& d = context.Error(codes::kFfnNotDivisible, "parallel.tensor",
                                    "tensor degree " + Str(tp_) + " does not divide ffn_hidden_size " +
                                        Str(m.ffn_hidden_size));
      context.NoteField(d, "model.ffn_hidden_size", "ffn_hidden_size set here");
    }
    if (m.num_layers < pp_) {
      Diagnostic& d = context.Error(
          codes::kTooFewLayers, "parallel.pipeline",
          "pipeline degree " + Str(pp_) + " exceeds num_layers " + Str(m.num_layers) +
              ": every stage needs at least one layer");
      context.NoteField(d, "model.num_layers", "num_layers set here");
    }
    if (s.parallel.sequence_parallel && tp_ > 1 && s.data.seq_len % tp_ != 0) {
      Diagnostic& d = context.Error(
          codes::kSequenceNotDivisible, "parallel.sequence_parallel",
          "sequence parallelism shards the sequence over tp = " + Str(tp_) + ", but seq_len " +
              Str(s.data.seq_len) + " does not divide by it");
      context.NoteField(d, "data.seq_len", "seq_len set here");
    }
    if (cp_ > 1 && s.parallel.context_method == spec::ContextMethod::kUlysses) {
      CheckUlysses(context);
    } else if (cp_ > 1 && s.data.seq_len % (2 * cp_) != 0) {
      Diagnostic& d = context.Error(
          codes::kContextNotDivisible, "parallel.context",
          "context degree " + Str(cp_) + " needs seq_len divisible by 2 * cp = " +
              Str(2 * cp_) + ", but seq_len is " + Str(s.data.seq_len));
      context.NoteField(d, "data.seq_len", "seq_len set here");
      d.Note("each context-parallel rank takes two chunks of the sequence for load balance "
             "(torchtitan)");
    }
    if (s.parallel.sequence_parallel && tp_ == 1) {
      context.Error(codes::kSequenceParallelNeedsTp, "parallel.sequence_parallel",
                    "sequence_parallel splits activations across the tensor-parallel group, but "
                    "the tensor degree is 1");
    }
    if (s.sharding.hybrid && dp_replicate_ <= 1) {
      Diagnostic& d = context.Error(
          codes::kHybridNeedsReplicate, "sharding.hybrid",
          "hybrid sharding replicates shards across data_replicate, but data_replicate is " +
              Str(dp_replicate_));
      context.NoteField(d, "parallel.data_replicate", "data_replicate set here");
    }
    if (s.sharding.stage > 0 && dp_shard_ == 1) {
      context.Warning(codes::kShardingWithoutShardAxis, "sharding.stage",
                      "sharding stage " + Str(s.sharding.stage) +
                          " shards over data_shard, which is 1: nothing is sharded");
    }
    CheckExpertParallel(context);
    if (context.sink().error_count() > errors_before_) return;
    ResolveKvHeadReplicas(context);

    // Megatron-LM pads the vocabulary so each tensor-parallel shard of the embedding is a
    // multiple of 128 rows (make_vocab_size_divisible_by × tp).
    const int64_t multiple = 128 * tp_;
    const int64_t padded = PaddedVocabSize(m.vocab_size, tp_);
    context.plan().mutable_model()->set_padded_vocab_size(padded);
    if (padded != m.vocab_size) {
      context.Info("model.vocab_size", "vocab_size " + Str(m.vocab_size) + " is padded to " +
                                           Str(padded) + " (a multiple of 128 * tp(" + Str(tp_) +
                                           ") = " + Str(multiple) + ") for the embedding shards");
      context.Resolve("model.padded_vocab_size", Str(padded),
                      "vocab_size " + Str(m.vocab_size) + " rounded up to a multiple of 128 * "
                      "tp(" + Str(tp_) + ") = " + Str(multiple) + " (Megatron-LM)");
    }
  }

  // DeepSpeed-Ulysses (Jacobs et al. 2023 §3): the all-to-all splits each tp rank's query and
  // key/value heads over cp, and the sequence into cp shards.
  void CheckUlysses(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ModelSpec& m = s.model;
    if (s.data.seq_len % cp_ != 0) {
      Diagnostic& d = context.Error(codes::kContextNotDivisible, "parallel.context",
                                    "context degree " + Str(cp_) + " does not divide seq_len " +
                                        Str(s.data.seq_len));
      context.NoteField(d, "data.seq_len", "seq_len set here");
    }
    if (m.num_heads % tp_ != 0) return;  // reported by the tensor check
    const int64_t kv_per_tp = ir::KvHeadReplicas(m.num_kv_heads, tp_) > 1 ? 1 : m.num_kv_heads / tp_;
    const std::pair<const char*, int64_t> heads[] = {{"num_heads", m.num_heads / tp_},
                                                     {"num_kv_heads", kv_per_tp}};
    for (const auto& [key, per_tp] : heads) {
      if (per_tp % cp_ == 0) continue;
      Diagnostic& d = context.Error(
          codes::kContextNotDivisible, "parallel.context",
          "context_method ulysses splits the heads of each tensor rank over context " + Str(cp_) +
              ", but " + key + " per tensor rank is " + Str(per_tp) + " (" + key + " " +
              Str(key == std::string("num_heads") ? m.num_heads : m.num_kv_heads) + " / tensor " +
              Str(tp_) + (kv_per_tp == 1 && key != std::string("num_heads") && m.num_kv_heads < tp_
                              ? ", one replicated head" : "") + ")");
      context.NoteField(d, std::string("model.") + key, std::string(key) + " set here");
      context.NoteField(d, "parallel.context_method", "context_method set here");
      d.Note("use context_method: ring, or a context degree that divides the heads per tensor rank");
      return;
    }
  }

  // parallel.expert (docs/planner-facts.md §9): torchtitan carves the expert-parallel groups out
  // of the dp_shard × cp ranks (ParallelDims._build_mesh_with_ep, expert tensor parallel = tp):
  // ep takes every cp rank and dp_shard · cp / ep of them remain to shard each expert's state.
  void CheckExpertParallel(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::MoeSpec& moe = s.model.moe;
    const spec::AutoOr<int64_t>& given = s.parallel.expert;
    const int64_t ep = given.is_auto ? 1 : given.value;
    if (moe.num_experts <= 0) {
      if (ep > 1) {
        context.Error(codes::kExpertNotDivisible, "parallel.expert",
                      "expert degree " + Str(ep) + " needs a mixture-of-experts model "
                      "(model.moe.num_experts), but the model is dense");
      }
      return;
    }
    if (moe.expert_ffn_size > 0 && moe.expert_ffn_size % tp_ != 0) {
      Diagnostic& d = context.Error(codes::kFfnNotDivisible, "parallel.tensor",
                                    "tensor degree " + Str(tp_) +
                                        " does not divide model.moe.expert_ffn_size " +
                                        Str(moe.expert_ffn_size));
      context.NoteField(d, "model.moe.expert_ffn_size", "expert_ffn_size set here");
    }
    const int64_t carved = dp_shard_ * cp_;
    if (ep % cp_ != 0) {
      Diagnostic& d = context.Error(
          codes::kExpertNotDivisible, "parallel.expert",
          "expert degree " + Str(ep) + " is not a multiple of context degree " + Str(cp_) +
              ": an expert-parallel group takes every context rank of its data_shard ranks");
      context.NoteField(d, "parallel.context", "context set here");
    } else if (carved % ep != 0) {
      Diagnostic& d = context.Error(
          codes::kExpertNotDivisible, "parallel.expert",
          "expert degree " + Str(ep) + " does not divide data_shard(" + Str(dp_shard_) +
              ") * context(" + Str(cp_) + ") = " + Str(carved) +
              ": expert-parallel groups are carved out of the data_shard x context ranks, "
              "which hold the same blocks");
      context.NoteField(d, "parallel.data_shard", "data_shard set here");
      d.Note("torchtitan: ep = dp_shard_in_ep x cp; the remaining dp_shard * cp / ep ranks shard "
             "each expert's state");
    }
    if (moe.num_experts % ep != 0) {
      Diagnostic& d = context.Error(
          codes::kExpertNotDivisible, "parallel.expert",
          "expert degree " + Str(ep) + " does not divide num_experts " + Str(moe.num_experts) +
              ": every expert-parallel rank holds an equal share of the routed experts");
      context.NoteField(d, "model.moe.num_experts", "num_experts set here");
    }
    if (ep % cp_ != 0 || carved % ep != 0 || moe.num_experts % ep != 0) return;
    ResolveExpertParallel(context, ep);
  }

  // Writes the expert degree and the expert-data-parallel size that CheckExpertParallel
  // accepted, each with its reason, and notes how routed rows are sized.
  void ResolveExpertParallel(PlanContext& context, int64_t ep) {
    const spec::MoeSpec& moe = context.spec().model.moe;
    const int64_t carved = dp_shard_ * cp_;
    ir::MixtureOfExperts* plan_moe = context.plan().mutable_model()->mutable_moe();
    plan_moe->set_expert_parallel(ep);
    plan_moe->set_expert_data_parallel(carved / ep);
    if (context.spec().parallel.expert.is_auto) {
      context.Resolve("parallel.expert", "1",
                      "auto is 1: every rank holds all " + Str(moe.num_experts) +
                          " experts and no token crosses ranks; expert parallelism trades "
                          "expert memory for two all-to-alls per MoE block each way, which "
                          "accel plan --search weighs");
    }
    if (moe.capacity_factor <= 0) {
      char margin[32];
      std::snprintf(margin, sizeof(margin), "%g", kDroplessRoutingMargin);
      context.Info("model.moe.capacity_factor",
                   std::string("dropless routing: the memory and step-time estimates size each "
                               "rank's routed rows at ") +
                       margin + " x tokens x experts_per_token, a stated imbalance margin "
                       "(docs/planner-facts.md section 9); set model.moe.capacity_factor to bound it");
    } else {
      context.Info("model.moe.capacity_factor",
                   "tokens beyond capacity_factor x tokens x experts_per_token / num_experts per "
                   "expert are dropped; the estimates size each rank's routed rows at that factor");
    }
    context.Resolve("model.moe.expert_data_parallel", Str(carved / ep),
                    "data_shard(" + Str(dp_shard_) + ") * context(" + Str(cp_) + ") / expert(" +
                        Str(ep) + ") = " + Str(carved / ep) +
                        " ranks hold the same experts and shard their state (torchtitan's "
                        "dp_shard_mod_ep)");
  }

  // Grouped-query attention with more tensor ranks than key/value heads: each head is
  // replicated on tp / num_kv_heads ranks (ir::Model.kv_head_replicas).
  void ResolveKvHeadReplicas(PlanContext& context) {
    const spec::ModelSpec& m = context.spec().model;
    const int64_t replicas = ir::KvHeadReplicas(m.num_kv_heads, tp_);
    if (replicas == 1) return;
    context.plan().mutable_model()->set_kv_head_replicas(replicas);
    context.Resolve("model.kv_head_replicas", Str(replicas),
                    "tensor degree " + Str(tp_) + " exceeds num_kv_heads " + Str(m.num_kv_heads) +
                        ": each key/value head is held by " + Str(replicas) +
                        " tensor-parallel ranks, its projection gradients summed over them");
  }

  void ResolveBatch(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::DataSpec& d = s.data;
    const spec::ParallelSpec& p = s.parallel;
    const int64_t micro = d.micro_batch_size;
    const int64_t dp = dp_replicate_ * dp_shard_;
    const std::string dp_text = "dp(" + Str(dp) + ")";

    // With pipelining the accumulation steps are the pipeline microbatches: an explicit value
    // of either fixes both.
    std::optional<int64_t> accum;
    if (!d.grad_accum_steps.is_auto) accum = d.grad_accum_steps.value;
    if (!p.pipeline_microbatches.is_auto) {
      if (pp_ == 1) {
        context.Warning(codes::kMicrobatchesWithoutPipeline, "parallel.pipeline_microbatches",
                        "pipeline_microbatches has no effect without pipeline parallelism "
                        "(pipeline is 1); use data.grad_accum_steps to accumulate gradients");
      } else if (accum && *accum != p.pipeline_microbatches.value) {
        Diagnostic& diag = context.Error(
            codes::kConflictingBatch, "parallel.pipeline_microbatches",
            "pipeline_microbatches " + Str(p.pipeline_microbatches.value) +
                " != grad_accum_steps " + Str(*accum) +
                ": with pipelining the accumulation steps are the microbatches");
        context.NoteField(diag, "data.grad_accum_steps", "grad_accum_steps set here");
        return;
      } else {
        accum = p.pipeline_microbatches.value;
      }
    }

    int64_t global = 0;
    if (!d.global_batch_size.is_auto) {
      global = d.global_batch_size.value;
      const int64_t per_step = micro * dp;
      if (accum) {
        if (global != per_step * *accum) {
          Diagnostic& diag = context.Error(
              codes::kBatchArithmetic, "data.global_batch_size",
              "global_batch_size " + Str(global) + " != micro_batch_size(" + Str(micro) +
                  ") * " + dp_text + " * grad_accum_steps(" + Str(*accum) + ") = " +
                  Str(per_step * *accum));
          context.NoteField(diag, "data.micro_batch_size", "micro_batch_size set here");
          return;
        }
      } else {
        if (global % per_step != 0) {
          const int64_t q = std::max<int64_t>(1, global / per_step);
          Diagnostic& diag = context.Error(
              codes::kBatchArithmetic, "data.global_batch_size",
              "global_batch_size " + Str(global) + " is not a multiple of micro_batch_size(" +
                  Str(micro) + ") * " + dp_text + " = " + Str(per_step) + ": " + Str(global) +
                  " != " + Str(micro) + " * " + Str(dp) + " * " + Str(q) + " (= " +
                  Str(micro * dp * q) + ")");
          context.NoteField(diag, "data.micro_batch_size", "micro_batch_size set here");
          return;
        }
        accum = global / per_step;
        context.Resolve("data.grad_accum_steps", Str(*accum),
                        "global_batch_size(" + Str(global) + ") / (micro_batch_size(" +
                            Str(micro) + ") * " + dp_text + ") = " + Str(*accum));
      }
    } else {
      if (!accum) {
        if (pp_ > 1) {
          accum = 4 * pp_;
          context.Resolve("data.grad_accum_steps", Str(*accum),
                          "both batch fields are auto: 4 * pp(" + Str(pp_) +
                              ") microbatches keep the pipeline bubble " + BubbleFormula() + " at " +
                              Percent(BubbleFraction(pp_, *accum)));
        } else {
          accum = 1;
          context.Resolve("data.grad_accum_steps", "1",
                          "global_batch_size and grad_accum_steps are both auto: no accumulation");
        }
      }
      global = micro * dp * *accum;
      context.Resolve("data.global_batch_size", Str(global),
                      "micro_batch_size(" + Str(micro) + ") * " + dp_text +
                          " * grad_accum_steps(" + Str(*accum) + ") = " + Str(global));
    }

    if (!CheckBatchLimits(context, *accum, global)) return;

    ir::Batch* batch = context.plan().mutable_batch();
    batch->set_seq_len(d.seq_len);
    batch->set_micro_batch_size(micro);
    batch->set_global_batch_size(global);
    batch->set_grad_accum_steps(*accum);
    batch->set_data_parallel_size(dp);
    batch->set_tokens_per_step(global * d.seq_len);
    batch->set_steps(s.training.steps);
    batch->set_total_tokens(global * d.seq_len * s.training.steps);

    ir::Pipeline* pipeline = context.plan().mutable_pipeline();
    pipeline->set_schedule(ToIr(p.pipeline_schedule));
    if (v_ > 1) pipeline->set_virtual_stages(static_cast<int32_t>(v_));
    pipeline->set_microbatches(*accum);
    pipeline->set_bubble_fraction(BubbleFraction(pp_, *accum));
    if (pp_ > 1 && p.pipeline_microbatches.is_auto) {
      context.Resolve("parallel.pipeline_microbatches", Str(*accum),
                      "the gradient accumulation steps are the pipeline microbatches");
    }
    const bool one_f_one_b_like = p.pipeline_schedule == spec::PipelineSchedule::k1F1B ||
                                  p.pipeline_schedule == spec::PipelineSchedule::kZbH1 ||
                                  p.pipeline_schedule == spec::PipelineSchedule::kZbv;
    if (pp_ > 1 && one_f_one_b_like && *accum < pp_) {
      Diagnostic& diag = context.Error(
          codes::kTooFewMicrobatches, MicrobatchField(s),
          "the " + std::string(spec::Name(p.pipeline_schedule)) +
              " schedule needs at least as many microbatches as pipeline stages: " +
              Str(*accum) + " microbatches < pp(" + Str(pp_) + ")");
      context.NoteField(diag, "parallel.pipeline_schedule", "schedule set here");
      diag.Note("raise global_batch_size or grad_accum_steps, or use pipeline_schedule: gpipe");
      return;
    }
    if (v_ > 1 && schedule_ == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B && *accum % pp_ != 0) {
      Diagnostic& diag = context.Error(
          codes::kTooFewMicrobatches, MicrobatchField(s),
          "the interleaved_1f1b schedule runs microbatches in groups of pp(" + Str(pp_) + "): " +
              Str(*accum) + " microbatches is not a multiple of it");
      context.NoteField(diag, "parallel.pipeline_schedule", "schedule set here");
      diag.Note("Megatron-LM's interleaved schedule has the same rule; use " +
                Str((*accum / pp_ + 1) * pp_) + " microbatches, or pipeline_schedule: 1f1b");
      return;
    }
    WarnLargeBubble(context, *accum);
  }

  // The field that fixed the number of microbatches, for diagnostics about it: an explicit
  // pipeline_microbatches (only meaningful with pipelining), else an explicit grad_accum_steps,
  // else the global batch it was derived from.
  std::string MicrobatchField(const spec::JobSpec& s) const {
    if (pp_ > 1 && !s.parallel.pipeline_microbatches.is_auto) {
      return "parallel.pipeline_microbatches";
    }
    if (!s.data.grad_accum_steps.is_auto) return "data.grad_accum_steps";
    return "data.global_batch_size";
  }

  // The schedule has pp × microbatches slots and a step global × seq_len tokens; both are
  // bounded (spec/limits.h) so the plan stays small and token counts fit in 63 bits. Checked
  // by division: the products themselves may not fit (global ≤ 2^50 when derived).
  bool CheckBatchLimits(PlanContext& context, int64_t accum, int64_t global) {
    const spec::JobSpec& s = context.spec();
    if (accum > spec::kMaxPipelineSlots / (pp_ * v_)) {
      const std::string chunks = v_ > 1 ? " * virtual_stages(" + Str(v_) + ")" : "";
      Diagnostic& d = context.Error(
          codes::kOverPlanLimit, MicrobatchField(s),
          "the pipeline schedule has pp(" + Str(pp_) + ")" + chunks + " * " + Str(accum) +
              " microbatches = " + Str(pp_ * v_ * accum) + " slots, more than accel's limit of " +
              Str(spec::kMaxPipelineSlots));
      context.NoteField(d, "parallel.pipeline", "pipeline set here");
      d.Note("every slot is a forward and a backward in the plan; use fewer microbatches");
      return false;
    }
    const int64_t seq = s.data.seq_len;
    if (global > spec::kMaxTokensPerStep / seq) {
      Diagnostic& d = context.Error(
          codes::kOverPlanLimit, "data.global_batch_size",
          "one step takes global_batch_size(" + Str(global) + ") * seq_len(" + Str(seq) + ") = " +
              Str(absl::uint128(global) * static_cast<uint64_t>(seq)) +
              " tokens, more than accel's limit of " + Str(spec::kMaxTokensPerStep));
      context.NoteField(d, "data.seq_len", "seq_len set here");
      return false;
    }
    return true;
  }

  // Above this fraction of idle pipeline time a warning says so. The planner's own default of
  // 4 microbatches per stage keeps the bubble (p-1)/(5p-1) under 20% at any depth; a quarter
  // of every step idle wastes more than one device-hour in four (Narayanan et al. 2021 advise
  // m >> p).
  static constexpr double kBubbleWarningFraction = 0.25;

  // GPipe and 1F1B idle (p-1)/(m+p-1) of each step (docs/planner-facts.md section 3), interleaved
  // 1F1B (p-1)/(v*m+p-1).
  void WarnLargeBubble(PlanContext& context, int64_t microbatches) {
    if (pp_ <= 1) return;
    const double bubble = BubbleFraction(pp_, microbatches);
    if (bubble <= kBubbleWarningFraction) return;
    Diagnostic& d = context.Warning(
        codes::kLargePipelineBubble, MicrobatchField(context.spec()),
        "the pipeline idles " + Percent(bubble) + " of every step: bubble " + BubbleFormula() +
            " with pp(" + Str(pp_) + ") and " + Str(microbatches) + " microbatches is over " +
            Percent(kBubbleWarningFraction));
    context.NoteField(d, "parallel.pipeline", "pipeline set here");
    d.Note(Str(4 * pp_) + " microbatches (4 * pp) would idle " +
           Percent(BubbleFraction(pp_, 4 * pp_)) +
           "; raise global_batch_size or grad_accum_steps");
  }

  // planner/pipeline_schedules.h: (p-1)/(v*m+p-1), v the model chunks per stage; simulated for
  // the zero-bubble schedules.
  double BubbleFraction(int64_t p, int64_t m) const {
    ScheduleShape shape;
    shape.schedule = BubbleSchedule();
    shape.stages = static_cast<int32_t>(p);
    shape.virtual_stages = static_cast<int32_t>(v_);
    shape.microbatches = static_cast<int32_t>(m);
    return ScheduleBubbleFraction(shape);
  }

  // The schedule whose bubble the messages quote: a zbv whose chunks were refused (v_ 1) has no
  // V to simulate, and says 1F1B's.
  ir::PipelineSchedule BubbleSchedule() const {
    return schedule_ == ir::PIPELINE_SCHEDULE_ZBV && v_ != 2 ? ir::PIPELINE_SCHEDULE_1F1B : schedule_;
  }

  std::string BubbleFormula() const {
    if (SplitsBackward(BubbleSchedule())) {
      return "of the " + std::string(ir::Name(schedule_)) + " op lists (simulated)";
    }
    return v_ > 1 ? "(p-1)/(v*m+p-1) with v(" + Str(v_) + ")" : "(p-1)/(m+p-1)";
  }

  static std::string Percent(double fraction) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * fraction);
    return text;
  }

  // Reducing in fp16 while neither compute nor parameters are fp16 leaves no loss scaling
  // (E0408 refuses it then), so gradients cast to fp16 for the all-reduce lose everything
  // below 2^-24 and overflow above 65504. Valid, so a warning; only with data parallelism.
  void WarnFp16Reduce(PlanContext& context) {
    const spec::PrecisionSpec& p = context.spec().precision;
    const int64_t dp = dp_replicate_ * dp_shard_;
    if (p.reduce != spec::DType::kFp16 || p.compute == spec::DType::kFp16 ||
        p.params == spec::DType::kFp16 || dp <= 1) {
      return;
    }
    Diagnostic& d = context.Warning(
        codes::kFp16ReduceWithoutLossScaling, "precision.reduce",
        "precision.reduce is fp16 without loss scaling (compute " +
            std::string(spec::Name(p.compute)) + ", params " + spec::Name(p.params) +
            "): gradients summed over dp(" + Str(dp) +
            ") in fp16 flush to zero below 2^-24 and overflow above 65504");
    d.Note("reduce in fp32, or in bf16 (the exponent range of fp32)");
  }

  void ResolveSharding(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ShardingSpec& sh = s.sharding;
    const int64_t h = s.model.hidden_size;
    ir::Sharding* sharding = context.plan().mutable_sharding();
    sharding->set_stage(sh.stage);
    sharding->set_degree(dp_shard_);
    // Routed experts shard over the ranks that hold the same experts (CheckExpertParallel).
    sharding->set_expert_shard_degree(context.plan().model().moe().expert_data_parallel());
    sharding->set_hybrid(sh.hybrid);
    sharding->set_offload(ToIr(sh.offload));
    // DeepSpeed's `auto` conventions as filled by transformers/Accelerate (docs/planner-facts.md §1).
    auto resolve = [&](const spec::AutoOr<int64_t>& given, const char* field, int64_t value,
                       const std::string& formula) {
      if (!given.is_auto) return given.value;
      context.Resolve(std::string("sharding.") + field, Str(value),
                      formula + " with hidden_size " + Str(h) + " (DeepSpeed convention, as "
                      "Hugging Face transformers fills `auto`)");
      return value;
    };
    sharding->set_bucket_elements(resolve(sh.bucket_size, "bucket_size", h * h, "h*h"));
    // floor(0.9·h²) in integer arithmetic: a float here broke DeepSpeed >= 0.15 (#6525).
    sharding->set_prefetch_bucket_elements(
        resolve(sh.prefetch_bucket_size, "prefetch_bucket_size", h * h * 9 / 10, "floor(0.9*h*h)"));
    sharding->set_param_persistence_threshold_elements(resolve(
        sh.param_persistence_threshold, "param_persistence_threshold", 10 * h, "10*h"));
  }

  // The executor runs what the plan names: LibTorch's fused scaled_dot_product_attention on CUDA
  // (FlashAttention-2 or memory-efficient, O(s) memory); on CPU the separate operators, since
  // Debian's LibTorch 1.13 has no public SDPA.
  // Gemma's soft-capped scores, and a sliding window shorter than the sequence, have no fused
  // kernel here: the separate operators on either device.
  void ResolveAttentionKernel(PlanContext& context) {
    const ir::Model& m = context.plan().model();
    const bool capped = m.attn_logit_softcapping() > 0;
    const bool windowed = m.sliding_window_layers_size() > 0 && m.sliding_window() < context.spec().data.seq_len;
    if (capped || windowed) {
      context.plan().mutable_model()->set_attention_kernel(ir::ATTENTION_KERNEL_MATH);
      context.Resolve("model.attention_kernel", "math",
                      capped ? "attn_logit_softcapping: cap*tanh(scores/cap) before the softmax needs the "
                               "b*a*s^2 scores (no fused kernel)"
                             : "sliding_window shorter than data.seq_len: the windowed causal mask needs "
                               "the b*a*s^2 scores (no fused kernel)");
      return;
    }
    const bool cuda = context.spec().cluster.device == spec::DeviceType::kCuda;
    context.plan().mutable_model()->set_attention_kernel(cuda ? ir::ATTENTION_KERNEL_SDPA
                                                              : ir::ATTENTION_KERNEL_MATH);
    context.Resolve("model.attention_kernel", cuda ? "sdpa" : "math",
                    cuda ? "cluster.device cuda: fused scaled_dot_product_attention "
                           "(FlashAttention-2 / memory-efficient), O(s) activation memory"
                         : "cluster.device cpu: softmax(QK^T)V as separate operators, "
                           "b*a*s^2 scores kept (Debian's LibTorch 1.13 has no fused SDPA)");
  }

  // The head and loss run in blocks of tokens whose logits are about the size of the hidden
  // states (Liger-Kernel's fused linear cross-entropy, Hsu et al. 2024 §3.2): ceil(V_local / h).
  void ResolveLossChunks(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    ir::Training* training = context.plan().mutable_training();
    if (!s.training.loss_chunks.is_auto) {
      training->set_loss_chunks(s.training.loss_chunks.value);
      return;
    }
    const ir::Model& m = context.plan().model();
    const int64_t tp = std::max<int64_t>(tp_, 1);
    const int64_t vocab = ir::VocabRows(m);
    const int64_t v_local = vocab / tp;
    const int64_t h = std::max<int64_t>(m.hidden_size(), 1);
    const int64_t tokens = std::max<int64_t>(context.plan().batch().micro_batch_size() * context.plan().batch().seq_len(), 1);
    const int64_t chunks = std::min(std::max<int64_t>(1, (v_local + h - 1) / h), tokens);
    training->set_loss_chunks(chunks);
    // In 128 bits: at the spec's limits s·b·V·4 passes 2^63 (the message then reads the maximum).
    const __int128 logits = __int128{4} * tokens * v_local;
    const int64_t logits_bytes = static_cast<int64_t>(
        std::min<__int128>(logits, std::numeric_limits<int64_t>::max()));
    context.Resolve("training.loss_chunks", Str(chunks),
                    absl::StrCat("ceil(vocabulary rows per rank ", v_local, " / hidden_size ", h,
                                 "): each block's fp32 logits are about the hidden states' size, and "
                                 "the whole logits (", FormatBytes(logits_bytes),
                                 " in fp32 per micro batch) are never held"));
  }

  void ResolveTopology(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ClusterSpec& c = s.cluster;
    ir::Topology* topology = context.plan().mutable_topology();
    topology->set_nodes(c.nodes);
    topology->set_devices_per_node(c.devices_per_node);
    topology->set_world_size(s.world_size());
    topology->set_device_type(ToIr(c.device));
    topology->set_device_model(c.device_model);
    topology->set_collective_timeout_seconds(c.collective_timeout_seconds);
    ResolveAttentionKernel(context);

    if (!c.device_memory_bytes.is_auto) {
      topology->set_device_memory_bytes(c.device_memory_bytes.value);
    } else if (c.device == spec::DeviceType::kCuda && !c.device_model.empty()) {
      std::optional<int64_t> bytes = DeviceMemoryBytes(c.device_model);
      if (bytes) {
        topology->set_device_memory_bytes(*bytes);
        context.Resolve("cluster.device_memory", FormatBytes(*bytes),
                        "memory of one " + c.device_model + " device");
      } else {
        Diagnostic& d = context.Error(
            codes::kUnresolvedAuto, "cluster.device_memory",
            "cannot resolve device_memory: auto: unknown device_model '" + c.device_model + "'");
        context.NoteField(d, "cluster.device_model", "device_model set here");
        d.Note("set cluster.device_memory, e.g. 80GiB, or use a known device_model");
      }
    } else {
      Diagnostic& d = context.Error(
          codes::kUnresolvedAuto, "cluster.device_memory",
          std::string("cannot resolve device_memory: auto for device ") + spec::Name(c.device) +
              (c.device == spec::DeviceType::kCuda ? " without cluster.device_model"
                                                   : ": host memory is not planned for"));
      d.Note(c.device == spec::DeviceType::kCuda
                 ? "set cluster.device_model (e.g. h100-80gb) or cluster.device_memory"
                 : "set cluster.device_memory to the memory each rank may use, e.g. 8GiB");
    }

    if (!c.runtime_overhead_bytes.is_auto) {
      topology->set_runtime_overhead_bytes(c.runtime_overhead_bytes.value);
    } else {
      const int64_t overhead = DefaultRuntimeOverheadBytes(ToIr(c.device));
      topology->set_runtime_overhead_bytes(overhead);
      context.Resolve("cluster.runtime_overhead", FormatBytes(overhead),
                      RuntimeOverheadReason(ToIr(c.device)));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeResolveAutoPass() { return std::make_unique<ResolveAutoPass>(); }

}  // namespace accel::planner
