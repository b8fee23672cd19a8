// Test helpers shared by the parity suites that train a plan on several ranks and compare with
// one rank (tensor_parallel_test, pipeline_test): the global batches, a rank set-up exactly as
// the worker does it, and the weight comparison.
#ifndef ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_
#define ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <vector>
#include <string>

#include "../multi_rank.h"
#include "../plan_from_yaml.h"
#include "checkpoint/pretrained.h"
#include "executor/models/tensor_parallel.h"
#include "checkpoint/checkpoint_store.h"
#include "executor/comm_trace.h"
#include "executor/plan_trainer.h"
#include "executor/models/causal_lm.h"
#include "executor/process_groups.h"
#include "executor/train/trainer.h"
#include "ir/plan.pb.h"
#include "sharded_save.h"

namespace accel::exec::testing {

// The parity tolerances of the tests that train a parallel layout against one rank (fp32, SGD):
// the layouts change only the order of fp32 sums, a few ulps per step, and each test file states
// what it measured against these; a bug these tests guard (a missing all-reduce, a wrong slice, a
// stage left out of the gradient norm) changes weights by O(1).
inline constexpr double kLossEps = 1e-6;    // relative, per-step losses
inline constexpr double kWeightRel = 1e-5;  // relative, final weights

// Tiny models for parity runs. gpt2: tied head; llama: grouped-query attention (4 query heads,
// 2 key/value heads), q/k/v biases and an untied head.
inline constexpr const char* kTinyGpt2 =
    "model: {arch: gpt2, hidden_size: 32, num_layers: 2, num_heads: 4, vocab_size: 256, max_seq_len: 16}\n";
inline constexpr const char* kTinyLlama =
    "model: {arch: llama, hidden_size: 32, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 48,\n"
    "        vocab_size: 256, max_seq_len: 16, qkv_bias: true, tie_word_embeddings: false}\n";

// A job of `model` on `world` CPU ranks laid out by `layout` (YAML appended to the job), micro
// batch 2 of 16 tokens, SGD, through the real loader and planner with --set `overrides`.
inline ir::Plan TinyPlan(const char* model, int world, const std::string& layout,
                         const std::vector<std::string>& overrides = {}) {
  const std::string yaml = std::string("version: 1\nname: parity\n") + model + R"(data:
  train: {path: /usr/share/games/fortunes, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 2
  global_batch_size: auto
training:
  steps: 4
  optimizer: {name: sgd, lr: 5.0e-2, momentum: 0.9}
  lr_schedule: {name: constant, warmup_steps: 0}
cluster: {nodes: 1, devices_per_node: )" + std::to_string(world) + R"(, device: cpu, device_memory: 1GiB}
)" + layout;
  return PlanFromYaml(yaml, overrides);
}

// The token ids every layout of `plan` reads: [steps, accumulation, dp·micro, seq + 1], drawn
// from a fixed seed; data-parallel rank d takes rows [d·micro, (d+1)·micro) of each micro-step,
// so every layout with the same global batch sees the same tokens.
inline torch::Tensor GlobalBatches(const ir::Plan& plan, int steps) {
  torch::manual_seed(7);
  return torch::randint(0, plan.model().vocab_size(),
                        {steps, plan.batch().grad_accum_steps(),
                         plan.batch().data_parallel_size() * plan.batch().micro_batch_size(),
                         plan.batch().seq_len() + 1},
                        torch::kLong);
}

// GlobalBatches' shape filled from packed documents of uneven length instead of uniform tokens:
// documents of 1 to 3·seq tokens (lengths drawn from a fixed seed), each as id 1, its tokens
// (ids 3 and up) and id 2, concatenated and cut into windows of seq + 1, so document boundaries
// fall anywhere in a window: inside one context-parallel chunk, on a chunk boundary, or not at
// all. accel packs documents with no document mask (as torchtitan does by default), so a layout
// equals one rank on these exactly as on any tokens; the batches make that claim tested.
inline torch::Tensor PackedDocumentBatches(const ir::Plan& plan, int steps) {
  const int64_t rows = steps * plan.batch().grad_accum_steps() * plan.batch().data_parallel_size() *
                       plan.batch().micro_batch_size();
  const int64_t window = plan.batch().seq_len() + 1, vocab = plan.model().vocab_size();
  torch::manual_seed(11);
  std::vector<int64_t> ids;
  while (static_cast<int64_t>(ids.size()) < rows * window) {
    const int64_t length = torch::randint(1, 3 * plan.batch().seq_len() + 1, {1}).item<int64_t>();
    ids.push_back(1);
    const torch::Tensor body = torch::randint(3, vocab, {length}, torch::kLong);
    for (int64_t i = 0; i < length; ++i) ids.push_back(body[i].item<int64_t>());
    ids.push_back(2);
  }
  ids.resize(static_cast<size_t>(rows * window));
  return torch::tensor(ids, torch::kLong)
      .view({steps, plan.batch().grad_accum_steps(),
             plan.batch().data_parallel_size() * plan.batch().micro_batch_size(), window});
}

// What one rank saw: per-step losses, its (stage- and tp-local) weights, the pipeline ops it
// executed per step, and every collective of its data- and tensor-parallel groups.
struct RankOutcome {
  std::vector<double> losses;
  std::map<std::string, torch::Tensor> weights;
  std::vector<std::vector<ExecutedOp>> ops;  // per step
  int stage = 0;
  int tp_rank = 0;
  std::vector<CollectiveRecord> trace;
  ShardLayout layout;                   // the rank's sharding layout
  PretrainedReadStats pretrained_read;  // what Trainer::LoadPretrained copied (init_from)
  // Mixture of experts, per step: tokens per routed expert (StepResult::moe, summed over dp and
  // pp) and the mean load-balancing loss of one block.
  std::vector<std::vector<int64_t>> expert_counts;
  std::vector<double> aux_losses;
  std::pair<int64_t, int64_t> local_experts;  // CausalLm::LocalExperts
};

// Save after update `save_after` (0: never) into `root`, or resume from its newest checkpoint.
struct CheckpointPlan {
  std::string root;
  int save_after = 0;
  bool resume = false;
};

// Trains `plan` for `steps` updates from the same seeded weights, as the worker sets ranks up:
// stage model, the stage's shard layout, the pipeline context; SGD with momentum 0.9, lr 5e-2
// and clipping at 0.5 (so a norm missing a stage or a tp slice changes the update). Every update
// reads GlobalBatches. Saves or resumes through the sharded checkpoint protocol the worker uses.
// `init_from`: Hugging Face weights every rank starts from (Trainer::LoadPretrained), as the worker
// does for model.init_from.
// `batches`: the token ids to read instead of GlobalBatches (same shape), e.g. PackedDocumentBatches.
inline std::vector<RankOutcome> Train(const ir::Plan& plan, int steps, const CheckpointPlan& ckpt = {},
                                      const std::string& init_from = "", const torch::Tensor& batches = {}) {
  const int world = static_cast<int>(plan.topology().world_size());
  const int64_t micro = plan.batch().micro_batch_size();
  const int64_t accum = plan.batch().grad_accum_steps();
  const torch::Tensor data = batches.defined() ? batches : GlobalBatches(plan, steps);
  std::vector<RankOutcome> out(world);
  std::vector<std::string> errors = RunRanks(world, [&](int rank, Rendezvous& rdzv) {
    auto trace = std::make_shared<CollectiveTrace>();
    auto traced = [&](std::shared_ptr<Communicator> c) { return c ? WithTrace(c, trace) : c; };
    auto world_comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world_comm.status());
    auto groups = ProcessGroups::Create(plan, rank, rdzv, *world_comm, CommBackend::kGloo);
    Ok(groups.status());
    auto config = ModelConfigFromPlan(plan.model());
    Ok(config.status());
    TensorParallel tp{traced(groups->Get("tp")), plan.mesh().sequence_parallel()};
    auto model = BuildCausalLm(*config, 1234, tp, {}, StageSpanFromPlan(plan, rank), traced(groups->Get("ep")));
    Ok(model.status());
    auto cp = ContextParallelFromPlan(plan, traced(groups->Get("cp")));
    Ok(cp.status());
    (*model)->set_context_parallel(*cp);
    std::vector<std::pair<std::string, int64_t>> names;
    for (const auto& item : (*model)->named_parameters()) names.emplace_back(item.key(), item.value().numel());
    const int stage = plan.ranks(rank).stage();
    auto layout = ShardLayout::FromPlan(plan.sharding(), stage, names, groups->RankIn("dp_shard"),
                                        groups->RankIn("ep_dp"));
    Ok(layout.status());
    DataParallelGroups dpg;
    dpg.dp = traced(groups->Get("dp"));
    dpg.dp_shard = traced(groups->Get("dp_shard"));
    dpg.dp_replicate = traced(groups->Get("dp_replicate"));
    dpg.tp = tp.group;
    dpg.replicated.sequence = tp.sequence_sharded() ? tp.group : nullptr;
    dpg.replicated.kv = traced(groups->Get("tp_kv"));
    dpg.replicated.partial = tp.sequence_sharded() ? nullptr : tp.group;
    dpg.ep = traced(groups->Get("ep"));
    dpg.ep_dp = traced(groups->Get("ep_dp"));
    dpg.replicated.context = (*model)->context_parallel().group;
    TrainerOptions options;
    options.optimizer = OptimizerKind::kSgd;
    options.momentum = 0.9;
    options.schedule.peak_lr = 5e-2;
    options.schedule.cosine = false;
    options.grad_clip_norm = 0.5;  // the norm must add every stage once: clipping acts
    GradSyncOptions sync;
    sync.tied_embeddings = plan.model().tie_word_embeddings() && plan.pipeline().stages_size() == 1;
    auto trainer = Trainer::Create(*model, CausalLmLoss(), options, *std::move(layout), dpg, sync);
    Ok(trainer.status());
    if (plan.pipeline().stages_size() > 1) {
      auto context = PipelineContextFromPlan(plan, rank, groups->Get("pp"), groups->Get("embedding"));
      Ok(context.status());
      Ok((*trainer)->SetPipeline(*std::move(context)));
    }
    const int64_t d = groups->RankIn("dp");
    if (!init_from.empty()) Ok((*trainer)->LoadPretrained(init_from, &out[rank].pretrained_read));
    out[rank].layout = (*trainer)->sync().layout();
    out[rank].tp_rank = groups->RankIn("tp");
    CheckpointStore store(ckpt.root, 2);
    if (ckpt.resume) {
      auto latest = store.LatestGood();
      Ok(latest.status());
      Ok((*trainer)->LoadState(latest->path).status());
    }
    out[rank].stage = stage;
    out[rank].local_experts = (*model)->LocalExperts();
    for (int s = static_cast<int>((*trainer)->step()); s < steps; ++s) {
      std::vector<torch::Tensor> batches;
      for (int64_t a = 0; a < accum; ++a) batches.push_back(data[s][a].narrow(0, d * micro, micro));
      auto result = (*trainer)->Step(batches);
      Ok(result.status());
      out[rank].losses.push_back(result->loss);
      out[rank].ops.push_back((*trainer)->last_pipeline_step().ops);
      out[rank].expert_counts.push_back(result->moe.expert_counts);
      if (result->moe.aux_losses > 0) {
        out[rank].aux_losses.push_back(result->moe.aux_loss_sum / static_cast<double>(result->moe.aux_losses));
      }
      if (ckpt.save_after == s + 1) {
        Expect((*trainer)->ShardedCheckpoint(), "the checkpoint is sharded");
        SaveShardedCheckpoint(**trainer, store, **world_comm, s + 1, &plan);
      }
    }
    Ok((*trainer)->sync().GatherAll());
    for (const auto& item : (*model)->named_parameters()) out[rank].weights[item.key()] = item.value().detach().clone();
    out[rank].trace = trace->Records();
  });
  for (const std::string& e : errors) REQUIRE(e == "");
  return out;
}

// The whole weights of the replica made of tp ranks `first` … first + tp − 1 (one pipeline
// stage), merged with the plan's split of every parameter.
inline std::map<std::string, torch::Tensor> MergedOverTp(const ir::Plan& plan, const std::vector<RankOutcome>& ranks,
                                                         int first, int tp) {
  std::map<std::string, torch::Tensor> out;
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      std::vector<torch::Tensor> slices;
      for (int r = first; r < first + tp; ++r) slices.push_back(ranks[r].weights.at(p.name()));
      out[p.name()] = TpMerge(slices, TpSplit{p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())});
    }
  }
  return out;
}

// Largest |a − b| / (|b| + 1e-3) over every weight of b (a must hold the same names and shapes).
inline double MaxRelativeDifference(const std::map<std::string, torch::Tensor>& a,
                                    const std::map<std::string, torch::Tensor>& b) {
  double worst = 0;
  REQUIRE(a.size() == b.size());
  for (const auto& [name, w] : b) {
    INFO("weight " << name);
    REQUIRE(a.at(name).sizes() == w.sizes());
    const double d = ((a.at(name) - w).abs() / (w.abs() + 1e-3)).max().item<double>();
    if (d > 1e-5) WARN("weight " << name << " differs by " << d);
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace accel::exec::testing

#endif  // ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_
