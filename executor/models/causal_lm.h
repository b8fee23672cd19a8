// Base class of the executor's decoder-only language models and the factory that builds one from a
// ModelConfig with deterministic initialization.
#ifndef ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_
#define ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/models/context/context_parallel.h"
#include "executor/models/model_config.h"
#include "executor/models/stage_span.h"
#include "executor/models/tensor_parallel.h"
#include "executor/models/unit_hooks.h"

namespace accel::exec {

class Communicator;
class MoeStepState;

// How one block's forward checkpoints (CausalLm::SetRecomputeModules).
struct BlockRecompute {
  bool attention_core = false;  // the attention core is a Recompute region (selective recompute)
  // Ops of a recomputed block, named relative to it ("self_attn.q_proj", "mlp.down_proj",
  // "self_attn.core"), whose outputs its forward keeps for the recompute (per-op selective
  // recompute, executor/train/kept_outputs.h); null for a block that is not recomputed. Shared
  // with the model: a block's forward (and its recompute) copies only the pointer.
  std::shared_ptr<const std::set<std::string, std::less<>>> kept_outputs;
  bool Keeps(std::string_view op) const { return kept_outputs != nullptr && kept_outputs->count(op) > 0; }
};

// A causal language model whose named_parameters() are exactly the Hugging Face names of the
// architecture (so model.safetensors moves between accel and transformers unchanged).
//
// Under tensor parallelism (tp.size() > 1) every parameter holds this rank's slice
// (TensorParallelSplit) under its Hugging Face name, and every rank of the tp group must run the
// same forward and backward, since they communicate.
class CausalLm : public torch::nn::Module {
 public:
  // A pipeline stage's model (span) holds only that stage's parameters, under the same names; a
  // tied head on a stage without the embedding holds its own copy as "lm_head.weight"
  // (ir::Parameter.tied_to).
  CausalLm(ModelConfig config, TensorParallel tp, StageSpan span = {})
      : config_(config), tp_(std::move(tp)), span_(span) {
    span_.layer_end = span.End(config.num_layers);
  }
  ~CausalLm() override = default;

  // The whole model (its span must be whole). tokens: [batch, seq] int64 token ids in
  // [0, vocab_size), seq <= max_seq_len (with sequence parallelism seq divides by tp). Returns
  // logits [batch, seq, vocab_size / tp]: this rank's columns of the (padded) vocabulary (all of
  // them without tensor parallelism; see VocabParallelCrossEntropy and GatherVocabParallel);
  // position t depends only on tokens 0..t. Throws c10::Error on bad shapes (callers at module
  // boundaries catch it).
  torch::Tensor Forward(const torch::Tensor& tokens);

  // This stage's forward through its model chunk `chunk` (0 unless interleaved): input is
  // tokens [batch, seq] for chunk 0 of a stage with the embedding, else the previous (virtual)
  // stage's hidden states [batch, seq (seq / tp with sequence parallelism), hidden]; returns
  // logits as Forward after the last chunk of a stage with the head, else the hidden states
  // after the chunk's last block (the shape of ir::Pipeline.activation_shape). Throws
  // c10::Error on bad shapes or a chunk the span lacks.
  torch::Tensor ForwardStage(const torch::Tensor& input, int chunk = 0);

  // ForwardStage through a chunk the head follows (the whole model's, or a pipeline's last stage's
  // last chunk), ending in the mean next-token loss of targets [batch, seq] instead of logits: the
  // head's product and the cross-entropy run in loss_chunks() row blocks and never hold the whole
  // logits (ChunkedCrossEntropy). Returns a 0-dim fp32 tensor, the same on every tp rank. Throws
  // c10::Error on bad shapes or a chunk the head does not follow.
  torch::Tensor ForwardLoss(const torch::Tensor& input, int chunk, const torch::Tensor& targets);

  // Row blocks of the chunked loss (ir::Training.loss_chunks); 0, the default, means
  // DefaultLossChunks of this rank's vocabulary rows and the hidden size.
  void set_loss_chunks(int64_t chunks) { loss_chunks_ = chunks; }
  // Context parallelism (the plan's ir::ContextParallel): in training, each forward takes this
  // rank's chunks of the tokens and targets it is given whole ([b, s]), rotates or embeds their
  // positions, and attention spans the cp group; the loss is the mean over this rank's tokens
  // (the trainer averages gradients and losses over cp). Eval (sampling) runs the whole sequence
  // on every rank. Set before the first forward.
  void set_context_parallel(ContextParallel cp) { cp_ = std::move(cp); }
  const ContextParallel& context_parallel() const { return cp_; }
  int64_t loss_chunks() const;

  // The Hugging Face name of the word embedding a tied head reads (and a tied copy copies).
  virtual std::string WordEmbeddingName() const = 0;

  // The pipeline stage this model holds.
  const StageSpan& span() const { return span_; }

  // How parameter `name` (a Hugging Face name of this architecture) is split over tensor-parallel
  // ranks: Megatron-LM's column-parallel (q/k/v, c_attn, c_fc, gate/up: output dim), row-parallel
  // (o_proj, c_proj, down_proj: input dim) and vocabulary-parallel (embeddings, lm_head: dim 0)
  // layers; {-1} for replicated ones (norms, row-parallel biases, position embeddings). The plan's
  // ir::Parameter.tp_dim/tp_parts must agree (the worker checks).
  virtual TpSplit TensorParallelSplit(const std::string& name) const = 0;

  // The dimensions this model was built with.
  const ModelConfig& config() const { return config_; }

  // Mixture of experts: the routed experts [first, end) of moe.num_experts this rank holds in
  // every MoE block (its share of the "ep" group; all of them without expert parallelism).
  virtual std::pair<int64_t, int64_t> LocalExperts() const { return {0, config_.moe.num_experts}; }
  // What the MoE blocks share with the trainer; null in a dense model.
  const std::shared_ptr<MoeStepState>& moe_state() const { return moe_state_; }
  // The tensor-parallel group it is split over.
  const TensorParallel& tensor_parallel() const { return tp_; }

  // Activation recompute of the modules the plan names (ir::Training.recompute_modules, made by
  // planner/model_params.h RecomputeModules), replacing any earlier set: a whole block,
  // "transformer.h.N" (gpt2) / "model.layers.N" (llama), keeps only its input and re-runs in
  // backward; a block's attention core, "transformer.h.N.attn.core" / "model.layers.N.self_attn.core",
  // keeps only q, k, v (executor/train/recompute.h). kept_outputs (ir::Training.recompute_kept_outputs,
  // per-op selective recompute) names ops of BlockOps() whose outputs every recomputed block keeps,
  // so its recompute skips them. Gradients are bitwise those without recompute.
  // Errors: InvalidArgument "recompute module NAME is not a block or attention core of this
  // ARCH model (blocks PREFIX0 … PREFIX{L-1})", "recompute kept output NAME is not an op of a
  // ARCH block (OP, OP, …)"; on error nothing changes.
  absl::Status SetRecomputeModules(const std::vector<std::string>& modules,
                                   const std::vector<std::string>& kept_outputs = {});

  // The ops of one block whose outputs per-op recompute can keep, in forward order, named
  // relative to the block: its matmuls and its attention core.
  virtual std::vector<std::string> BlockOps() const = 0;

  // Hooks called around every shard unit's forward (see UnitHooks); nullptr (the default): none.
  // Not owned; must outlive every later Forward.
  void set_unit_hooks(UnitHooks* hooks) { hooks_ = hooks; }

 protected:
  // Unit numbering of UnitHooks: the head is unit num_layers + 1.
  int HeadUnit() const { return static_cast<int>(config_.num_layers) + 1; }
  void EnterUnit(int unit) {
    if (hooks_ != nullptr) hooks_->BeforeForward(unit);
  }
  torch::Tensor ExitUnit(int unit, const torch::Tensor& output) {
    return hooks_ != nullptr ? hooks_->AfterForward(unit, output) : output;
  }

  // Hugging Face path of block `layer`, "transformer.h.N" / "model.layers.N", and the suffix
  // that names its attention core, ".attn.core" / ".self_attn.core".
  virtual std::string BlockPath(int64_t layer) const = 0;
  virtual std::string AttentionCoreSuffix() const = 0;
  // Whether SetRecomputeModules named block `layer`, and how the block checkpoints inside.
  bool RecomputesBlock(size_t layer) const {
    return layer < recompute_block_.size() && recompute_block_[layer];
  }
  BlockRecompute BlockRecomputeOf(size_t layer) const;

  // ForwardStage's work once `chunk` is checked: embed when EmbedsInput(chunk), run the chunk's
  // blocks, apply the head when HeadFollows(chunk): logits, or with targets defined the loss
  // (HeadLoss).
  virtual torch::Tensor ForwardChunk(const torch::Tensor& input, int chunk, const torch::Tensor& targets) = 0;
  // The head on the final norm's output x [b, s, h] with weight [V_local, h]: logits [b, s,
  // V_local] when targets is undefined, else the chunked mean loss of targets [b, s].
  torch::Tensor ApplyHead(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& targets) const;
  bool EmbedsInput(int chunk) const { return span_.has_embedding && chunk == 0; }
  bool HeadFollows(int chunk) const { return span_.has_head && chunk == span_.NumChunks() - 1; }
  // Global layer indices of chunk `chunk`'s blocks, [begin, end).
  std::pair<int64_t, int64_t> ChunkLayers(int chunk) const { return span_.Chunk(chunk, config_.num_layers); }
  // Every block this stage holds, chunk by chunk, each with its global layer index.
  std::vector<int64_t> HeldLayers() const;
  // Position of chunk `chunk`'s first block among HeldLayers().
  size_t ChunkOffset(int chunk) const;

  // Checks and measures a chunk's input: tokens [batch, seq] (returns seq) or hidden states
  // (returns the whole sequence length, seq × tp when sequence-sharded).
  int64_t StageSequenceLength(const torch::Tensor& input, int chunk) const;
  // The context parallelism this forward runs under: &cp_ when it is enabled and the model is
  // training, else null.
  const ContextParallel* ActiveContext() const { return exec::ActiveContext(&cp_, is_training()); }
  // This rank's tokens of a chunk's input: its context-parallel chunks of tokens [b, s]
  // (LocalChunks) under ActiveContext, else `input`.
  torch::Tensor LocalInput(const torch::Tensor& input, int chunk) const;

  friend class SequenceParallelPause;
  ModelConfig config_;
  TensorParallel tp_;
  StageSpan span_;
  UnitHooks* hooks_ = nullptr;
  std::vector<bool> recompute_block_;
  std::vector<bool> recompute_core_;
  std::shared_ptr<const std::set<std::string, std::less<>>> kept_outputs_;
  int64_t loss_chunks_ = 0;
  // Blocks hold its address (their attention reads it when the model is training).
  ContextParallel cp_;
  std::shared_ptr<MoeStepState> moe_state_;  // set by a model with MoE blocks
};

// Turns a model's sequence parallelism off for its lifetime, e.g. to sample with contexts of any
// length (the weights are the same either way). Not for use inside a training step.
class SequenceParallelPause {
 public:
  explicit SequenceParallelPause(CausalLm& model)
      : model_(model), was_(model.tp_.sequence_parallel) {
    model.tp_.sequence_parallel = false;
  }
  ~SequenceParallelPause() { model_.tp_.sequence_parallel = was_; }
  SequenceParallelPause(const SequenceParallelPause&) = delete;
  SequenceParallelPause& operator=(const SequenceParallelPause&) = delete;

 private:
  CausalLm& model_;
  bool was_;
};

// Scaled dot-product attention with a causal mask (Vaswani et al. 2017): softmax(q k^T / sqrt(d)
// + mask) v where mask is -inf above the diagonal. q: [batch, heads, seq, head_dim]; k, v:
// [batch, kv_heads, seq, head_dim] with kv_heads dividing heads, query head i reading key/value
// head i / (heads / kv_heads) (grouped-query attention, Ainslie et al. 2023). Returns [batch,
// heads, seq, head_dim]. k and v are never repeated to the query heads (except by a fused kernel
// before LibTorch 2.5, which lacks enable_gqa): the math path stacks each key/value head's query
// heads along the rows, so autograd keeps q, k, v, the softmax output and the mask only.
// fused: LibTorch's scaled_dot_product_attention(is_causal) picks FlashAttention-2 or the
// memory-efficient kernel on CUDA (the math kernel on CPU) and keeps O(seq) memory for backward;
// else softmax(q k^T) is materialized. Throws c10::Error for fused on a LibTorch before 2.0, or
// when kv_heads does not divide heads.
// scores: how the attention scores depart from q k^T / sqrt(d) with a causal mask (Gemma 2/3,
// transformers' eager_attention_forward): scale them by `scale` (0: 1/sqrt(d)), cap them as
// cap·tanh(scores/cap) (0: no cap) before the mask, and let query i see keys j with
// i − window < j ≤ i only (window 0: all j ≤ i). The fused kernel takes `scale` only; a cap or a
// window with fused throws c10::Error.
struct AttentionScores {
  double scale = 0.0;
  double softcap = 0.0;
  int64_t window = 0;
};
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              bool fused = false, const AttentionScores& scores = {});

// Whether this LibTorch has scaled_dot_product_attention (2.0 and later).
bool SdpaAvailable();

// CausalAttention as block `op` (its attention core, "self_attn.core" / "attn.core") runs it under
// `recompute`: checkpointed when recompute.attention_core (selective recompute, Korthikanti et al.
// 2022 §4.1: forward keeps only q, k and v; backward recomputes the scores and softmax), its output
// kept when recompute.Keeps(op) (KeptOutputs).
// With `cp` enabled, q, k, v hold this rank's chunks of the sequence and the core is
// ContextParallelAttention (executor/models/context/context_attention.h), which takes no
// `scores` options (c10::Error when any is set).
torch::Tensor AttentionCore(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            bool fused, const BlockRecompute& recompute, std::string_view op,
                            const ContextParallel* cp = nullptr, const AttentionScores& scores = {});

// Overwrites some or all parameters of a freshly drawn model: the whole one, a tensor-parallel
// slice or a pipeline stage (BuildCausalLm).
using ModelInitializer = std::function<absl::Status(CausalLm& whole)>;

// Builds the model for config.arch on the CPU and initializes it from seed, identically on every
// rank and run: every weight matrix and embedding ~ Normal(0, 0.02), biases 0, norm weights 1
// (q/k norms too; 0 where norms compute x̂·(1 + w): ModelConfig::norm_unit_offset), LayerNorm
// biases 0; GPT-2's attn.c_proj and mlp.c_proj weights ~ Normal(0, 0.02/sqrt(2L))
// (Radford et al. 2019, section 2.3; Hugging Face GPT2PreTrainedModel._init_weights). Parameters
// are drawn in named_parameters() order from one generator seeded with seed, so results do not
// depend on the global RNG. Under tensor parallelism the whole model is drawn so, then each rank
// keeps its slices (TpSlice), so every layout starts from the same weights (transiently the full
// model is in memory). With sequence parallelism a replicated parameter's gradient is this rank's
// part only (its inputs are sequence shards), as is a replicated key/value head's; the trainer
// sums them over their groups once per step (executor/train/replicated_grads.h).
// `initialize`, when set, runs on the model this rank keeps, after the seeded draw, the
// tensor-parallel slicing and the stage's selection (e.g. LoadPretrained, which then reads only
// this rank's part of a checkpoint); it overwrites the values it sets, so every layout still
// starts from the same weights. Its error is returned.
// A pipeline stage (span) keeps only its parameters of the whole model, so every layout starts
// from the same weights too; a tied head's copy starts equal to the word embedding.
// Mixture of experts: with ep_group (the plan's "ep" group, size P) the whole model draws all
// E routed experts and this rank keeps experts [q·E/P, (q+1)·E/P) (q its rank in the group) of
// each grouped tensor, after the tensor-parallel slicing; so every expert-parallel layout starts
// from the same weights as one rank.
// Errors: InvalidArgument from ValidateModelConfig, or when tp.size() does not divide num_heads,
// num_kv_heads, ffn_size or vocab_size, ep_group's size does not divide moe.num_experts, or the
// span is not within the model.
absl::StatusOr<std::shared_ptr<CausalLm>> BuildCausalLm(const ModelConfig& config, uint64_t seed,
                                                        const TensorParallel& tp = {},
                                                        const ModelInitializer& initialize = {},
                                                        const StageSpan& span = {},
                                                        std::shared_ptr<Communicator> ep_group = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_
