#include "planner/layout_search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/diagnostics.h"
#include "ir/plan_access.h"
#include "ir/plan_verifier.h"
#include "planner/planner.h"

namespace accel::planner {
namespace {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Every ordered (a, b, c, d) with a·b·c·d = n.
std::vector<std::array<int64_t, 4>> Factorizations4(int64_t n) {
  std::vector<std::array<int64_t, 4>> out;
  for (int64_t a : Divisors(n)) {
    for (int64_t b : Divisors(n / a)) {
      for (int64_t c : Divisors(n / a / b)) out.push_back({a, b, c, n / a / b / c});
    }
  }
  return out;
}

// Micro batch sizes tried: divisors of the global batch up to 4 × the spec's micro batch.
std::vector<int64_t> MicroBatchSizes(const spec::JobSpec& spec, int64_t global_batch) {
  const int64_t cap = std::max<int64_t>(1, spec.data.micro_batch_size) * 4;
  std::vector<int64_t> out;
  for (int64_t m : Divisors(global_batch)) {
    if (m <= cap) out.push_back(m);
  }
  return out;
}

// The spec's global batch, resolving `auto` with the planner as the spec stands.
absl::StatusOr<int64_t> GlobalBatch(const spec::JobSpec& spec) {
  if (!spec.data.global_batch_size.is_auto) return spec.data.global_batch_size.value;
  DiagnosticSink sink;
  PlanOptions options;
  options.dump_after = "resolve-auto";
  options.allow_not_fitting = true;
  PlanResult result = BuildPlan(spec, options, sink);
  if (!result.ok || result.plan.batch().global_batch_size() <= 0) {
    return absl::InvalidArgumentError(
        "--search keeps the global batch fixed, but data.global_batch_size is auto and the spec "
        "as written does not resolve it; set data.global_batch_size");
  }
  return result.plan.batch().global_batch_size();
}

// The summary kept of one fitting plan.
RankedLayout Summarize(const Layout& layout, const ir::Plan& plan) {
  RankedLayout r;
  r.layout = layout;
  r.grad_accum_steps = plan.batch().grad_accum_steps();
  r.step_time = plan.step_time();
  for (auto& c : *r.step_time.mutable_communication()) c.clear_formula();
  for (const ir::MemoryEstimate& m : plan.memory()) {
    if (m.device_total_bytes() >= r.peak_device_bytes) {
      r.peak_device_bytes = m.device_total_bytes();
      r.device_limit_bytes = m.device_limit_bytes();
    }
  }
  return r;
}

bool EveryStageFits(const ir::Plan& plan) {
  if (plan.memory().empty()) return false;
  for (const ir::MemoryEstimate& m : plan.memory()) {
    if (!m.fits()) return false;
  }
  return true;
}

// Outcome of planning one candidate.
struct Outcome {
  bool valid = false;
  bool fits = false;
  bool refused = false;  // fits, but SearchOptions.refuse named a reason
  bool planned = false;
  RankedLayout ranked;
};

// Plans one candidate: `job` is a worker's own copy of the spec, with the candidate's layout
// applied in place (copying the spec, source map included, per candidate cost more than
// planning it in summary mode).
Outcome PlanCandidate(const spec::JobSpec& job, const Layout& layout, const PlanOptions& options,
                      const SearchOptions& search) {
  DiagnosticSink sink;
  Outcome out;
  out.planned = true;
  auto inspect = [&](const ir::Plan& plan) {
    out.fits = EveryStageFits(plan);
    if (out.fits && search.refuse) out.refused = !search.refuse(plan).empty();
    if (out.fits && !out.refused) out.ranked = Summarize(layout, plan);
  };
  out.valid = BuildPlanAndInspect(job, options, sink, inspect);
  out.fits = out.fits && out.valid;
  out.refused = out.refused && out.fits;
  return out;
}

// Plans the candidates `which` (indices into `layouts`) on `threads` threads (0: one per
// hardware thread) into `outcomes` (indexed like `layouts`).
void PlanAll(const spec::JobSpec& spec, const std::vector<Layout>& layouts,
             const std::vector<size_t>& which, int64_t global_batch, const PlanOptions& options,
             const SearchOptions& search, std::vector<Outcome>& outcomes) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    spec::JobSpec job = spec;
    for (size_t k = next++; k < which.size(); k = next++) {
      const size_t i = which[k];
      ApplyLayoutTo(spec, layouts[i], global_batch, job);
      outcomes[i] = PlanCandidate(job, layouts[i], options, search);
    }
  };
  const int threads = search.threads;
  const unsigned n = threads > 0 ? static_cast<unsigned>(threads)
                                 : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

// The candidates of EnumerateLayouts with, for each, its wave (1 with offload, plus 2 for
// gpipe) and its immediate predecessors in the order the dominance skip uses
// (SearchResult.dominated): the same candidate with offload none, and for gpipe with 1f1b;
// kNoIndex where there is none.
constexpr size_t kNoIndex = static_cast<size_t>(-1);
constexpr int kWaves = 4;
struct Candidates {
  std::vector<Layout> layouts;
  std::vector<int> wave;
  std::vector<std::array<size_t, 2>> before;
};

// The expert degrees searched for one factorization: {1} for a dense model; for a
// mixture-of-experts model the divisors of data_shard × cp that are multiples of cp and divide
// num_experts (resolve-auto's E0424), none when tensor does not divide the expert width (E0421).
std::vector<int64_t> ExpertDegrees(const spec::ModelSpec& model, int64_t ds, int64_t cp,
                                   int64_t tp, bool apply_rules) {
  const spec::MoeSpec& moe = model.moe;
  if (moe.num_experts <= 0) return {1};
  if (apply_rules && moe.expert_ffn_size % tp != 0) return {};
  std::vector<int64_t> out;
  for (int64_t ep : Divisors(ds * cp)) {
    if (!apply_rules || (ep % cp == 0 && moe.num_experts % ep == 0)) out.push_back(ep);
  }
  return out;
}

// Adds the candidates of one degree choice (dr, ds, cp, tp, pp, ep): every sharding stage, offload,
// hybrid flag, micro batch, schedule and recompute policy the rules allow, each with its wave and
// predecessors (Candidates).
void AddShardingVariants(const Layout& degrees, const std::vector<spec::PipelineSchedule>& schedules,
                         const std::vector<int64_t>& micros, int64_t global_batch, bool apply_rules,
                         Candidates& out) {
  using spec::Offload;
  const int64_t dr = degrees.data_replicate, ds = degrees.data_shard, cp = degrees.context;
  const int64_t tp = degrees.tensor, pp = degrees.pipeline, ep = degrees.expert;
  for (int64_t stage = 0; stage <= 3; ++stage) {
    // E0409 kOffloadNeedsSharding: offload from stage 1; E0414 kParamOffloadNeedsStage3.
    std::vector<Offload> offloads = {Offload::kNone};
    if (!apply_rules || stage >= 1) offloads.push_back(Offload::kOptimizer);
    if (!apply_rules || stage == 3) offloads.push_back(Offload::kAll);
    // E0416 kHybridNeedsStage3, E0410 kHybridNeedsReplicate (and something to shard).
    const bool hybrid = stage == 3 && dr > 1 && ds > 1;
    std::vector<bool> hybrids = {hybrid};
    if (!apply_rules) hybrids.push_back(!hybrid);
    for (bool hy : hybrids) {
      for (int64_t m : micros) {
        if (global_batch % (m * dr * ds) != 0) continue;
        const int64_t accum = global_batch / (m * dr * ds);
        size_t one_f_one_b = kNoIndex;  // the 1f1b group of this micro batch
        for (spec::PipelineSchedule schedule : schedules) {
          // E0407 kTooFewMicrobatches: 1f1b needs accum ≥ pp, interleaving accum % pp == 0.
          if (apply_rules && pp > 1 &&
              ((schedule == spec::PipelineSchedule::k1F1B && accum < pp) ||
               (schedule == spec::PipelineSchedule::kInterleaved1F1B && accum % pp != 0))) {
            continue;
          }
          const size_t base = out.layouts.size();
          const size_t n = offloads.size();
          const bool gpipe = schedule == spec::PipelineSchedule::kGpipe;
          if (schedule == spec::PipelineSchedule::k1F1B) one_f_one_b = base;
          int rc_index = 0;
          for (spec::Recompute rc : {spec::Recompute::kNone, spec::Recompute::kSelective,
                                     spec::Recompute::kOp, spec::Recompute::kFull}) {
            for (size_t o = 0; o < n; ++o) {
              const size_t here = out.layouts.size();
              out.wave.push_back((o > 0 ? 1 : 0) + (gpipe ? 2 : 0));
              out.before.push_back(
                  {o > 0 ? base + static_cast<size_t>(rc_index) * n : kNoIndex,
                   gpipe && one_f_one_b != kNoIndex ? one_f_one_b + (here - base) : kNoIndex});
              out.layouts.push_back(
                  Layout{dr, ds, cp, tp, pp, stage, m, rc, schedule, offloads[o], hy, ep});
            }
            ++rc_index;
          }
        }
      }
    }
  }
}

Candidates Enumerate(const spec::JobSpec& spec, int64_t global_batch, bool apply_rules) {
  Candidates out;
  const int64_t world = spec.world_size();
  if (world <= 0 || global_batch <= 0) return out;
  const int64_t spec_cp = spec.parallel.context.is_auto ? 1 : spec.parallel.context.value;
  const int64_t per_node = std::max<int64_t>(spec.cluster.devices_per_node, 1);
  std::vector<int64_t> cps;
  for (int64_t cp : Divisors(world)) {
    // E0417 kContextNotDivisible: seq_len must divide into 2·cp chunks.
    if (apply_rules && cp > 1 && spec.data.seq_len % (2 * cp) != 0) continue;
    if (cp > per_node && cp != spec_cp) continue;  // cp × tp ≤ devices_per_node below
    cps.push_back(cp);
  }
  const std::vector<int64_t> micros = MicroBatchSizes(spec, global_batch);
  const spec::ModelSpec& model = spec.model;
  for (int64_t cp : cps) {
    for (const auto& [dr, ds, tp, pp] : Factorizations4(world / cp)) {
      if (cp > 1 && cp != spec_cp && cp * tp > per_node) continue;
      // resolve-auto's layout rules: E0203 kHeadsNotDivisible, kKvHeadsNotDivisible,
      // kFfnNotDivisible, kTooFewLayers.
      if (apply_rules && (model.num_heads % tp != 0 || (model.num_kv_heads % tp != 0 && ir::KvHeadReplicas(model.num_kv_heads, tp) == 1) ||
                          (model.ffn_hidden_size > 0 && model.ffn_hidden_size % tp != 0) ||
                          model.num_layers < pp)) {
        continue;
      }
      const std::vector<int64_t> experts = ExpertDegrees(model, ds, cp, tp, apply_rules);
      if (experts.empty()) continue;
      std::vector<spec::PipelineSchedule> schedules = {spec::PipelineSchedule::k1F1B};
      if (pp > 1) {
        schedules.push_back(spec::PipelineSchedule::kGpipe);
        schedules.push_back(spec::PipelineSchedule::kInterleaved1F1B);
      }
      for (int64_t ep : experts) {
        Layout degrees;
        degrees.data_replicate = dr, degrees.data_shard = ds, degrees.context = cp;
        degrees.tensor = tp, degrees.pipeline = pp, degrees.expert = ep;
        AddShardingVariants(degrees, schedules, micros, global_batch, apply_rules, out);
      }
    }
  }
  return out;
}

// The winner planned again in full (PlanOptions without summary_only): an ordinary plan that
// passes ir::VerifyPlan, with the step time and peak memory the search ranked it by. Anything
// else is an accel bug in the summary mode, reported as Internal.
absl::Status CheckWinner(const spec::JobSpec& spec, const RankedLayout& winner,
                         int64_t global_batch) {
  DiagnosticSink sink;
  PlanOptions options;
  options.allow_not_fitting = true;
  PlanResult full = BuildPlan(ApplyLayout(spec, winner.layout, global_batch), options, sink);
  std::vector<std::string> violations =
      full.ok ? ir::VerifyPlan(full.plan) : std::vector<std::string>{"errors reported"};
  const RankedLayout again = Summarize(winner.layout, full.plan);
  if (violations.empty() && EveryStageFits(full.plan) &&
      again.step_time.step_seconds() == winner.step_time.step_seconds() &&
      again.peak_device_bytes == winner.peak_device_bytes) {
    return absl::OkStatus();
  }
  return absl::InternalError(
      "layout search: the full plan of the winner " + DegreesText(winner.layout) +
      " differs from its summary plan (" +
      (violations.empty() ? std::string("step time or memory") : violations.front()) +
      "); this is an accel bug");
}

}  // namespace

std::vector<Layout> EnumerateLayouts(const spec::JobSpec& spec, int64_t global_batch,
                                     bool apply_rules) {
  return Enumerate(spec, global_batch, apply_rules).layouts;
}

void ApplyLayoutTo(const spec::JobSpec& spec, const Layout& layout, int64_t global_batch,
                   spec::JobSpec& out) {
  using I = spec::AutoOr<int64_t>;
  out.parallel.data_replicate = I::Of(layout.data_replicate);
  out.parallel.data_shard = I::Of(layout.data_shard);
  out.parallel.context = I::Of(layout.context);
  out.parallel.tensor = I::Of(layout.tensor);
  out.parallel.pipeline = I::Of(layout.pipeline);
  out.parallel.pipeline_schedule = layout.schedule;
  out.parallel.pipeline_microbatches = I::Auto();
  // The spec's model chunks when it interleaves already, else auto (2 for interleaved_1f1b).
  const bool interleaved = layout.schedule == spec::PipelineSchedule::kInterleaved1F1B;
  out.parallel.virtual_stages =
      interleaved && spec.parallel.pipeline_schedule == layout.schedule ? spec.parallel.virtual_stages : I::Auto();
  out.parallel.sequence_parallel = spec.parallel.sequence_parallel && layout.tensor > 1;
  out.sharding.stage = layout.sharding_stage;
  out.data.micro_batch_size = layout.micro_batch_size;
  out.data.global_batch_size = I::Of(global_batch);
  out.data.grad_accum_steps = I::Auto();
  out.training.recompute = layout.recompute;
  out.sharding.offload = layout.offload;
  out.sharding.hybrid = layout.hybrid;
  out.parallel.expert = I::Of(layout.expert);
}

spec::JobSpec ApplyLayout(const spec::JobSpec& spec, const Layout& layout, int64_t global_batch) {
  spec::JobSpec s = spec;
  ApplyLayoutTo(spec, layout, global_batch, s);
  return s;
}

absl::StatusOr<SearchResult> SearchLayouts(const spec::JobSpec& spec, const SearchOptions& search) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<int64_t> global_batch = GlobalBatch(spec);
  if (!global_batch.ok()) return global_batch.status();
  SearchResult result;
  result.global_batch = *global_batch;
  const Candidates candidates = Enumerate(spec, *global_batch, true);
  const std::vector<Layout>& layouts = candidates.layouts;
  ModelParamsCache tables;
  ShardTotalsCache totals;
  PlanOptions options;
  options.allow_not_fitting = true;  // the fit is read from plan.memory, not an error
  options.summary_only = search.summary_only;
  options.step_time_only_if_fits = true;  // only fitting candidates are ranked
  options.model_params_cache = &tables;
  options.shard_totals_cache = &totals;
  std::vector<Outcome> outcomes(layouts.size());
  // In waves of offload and schedule (SearchResult.dominated): a candidate is planned only
  // when neither immediate predecessor fits (unrefused) or was itself skipped, since then
  // something it dominates fits and is never slower.
  std::vector<char> covered(layouts.size(), 0);  // fits unrefused, or skipped as dominated
  for (int wave = 0; wave < kWaves; ++wave) {
    std::vector<size_t> which;
    for (size_t i = 0; i < layouts.size(); ++i) {
      if (search.skip_dominated ? candidates.wave[i] != wave : wave != 0) continue;
      bool dominated = false;
      for (size_t b : candidates.before[i]) dominated = dominated || (b != kNoIndex && covered[b]);
      if (search.skip_dominated && dominated) {
        covered[i] = 1;
        ++result.dominated;
        continue;
      }
      which.push_back(i);
    }
    PlanAll(spec, layouts, which, *global_batch, options, search, outcomes);
    for (size_t i : which) covered[i] = outcomes[i].fits && !outcomes[i].refused;
  }
  result.enumerated = static_cast<int64_t>(layouts.size());
  for (Outcome& o : outcomes) {
    result.valid += o.valid;
    result.fitting += o.fits;
    result.refused += o.refused;
    if (o.fits && !o.refused) result.ranked.push_back(std::move(o.ranked));
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [](const RankedLayout& a, const RankedLayout& b) {
                     return a.step_time.step_seconds() < b.step_time.step_seconds();
                   });
  if (search.summary_only && !result.ranked.empty()) {
    absl::Status winner = CheckWinner(spec, result.ranked.front(), *global_batch);
    if (!winner.ok()) return winner;
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string DegreesText(const Layout& layout) {
  std::string s = std::to_string(layout.data_replicate) + "x" + std::to_string(layout.data_shard) +
                  "x" + std::to_string(layout.tensor) + "x" + std::to_string(layout.pipeline);
  if (layout.context > 1) s += " cp" + std::to_string(layout.context);
  if (layout.expert > 1) s += " ep" + std::to_string(layout.expert);
  return s;
}

}  // namespace accel::planner
