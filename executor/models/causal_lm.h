// Base class of the executor's decoder-only language models and the factory that builds one from a
// ModelConfig with deterministic initialization.
#ifndef ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_
#define ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/models/model_config.h"
#include "executor/models/unit_hooks.h"

namespace accel::exec {

// A causal language model whose named_parameters() are exactly the Hugging Face names of the
// architecture (so model.safetensors moves between accel and transformers unchanged).
class CausalLm : public torch::nn::Module {
 public:
  explicit CausalLm(ModelConfig config) : config_(config) {}
  ~CausalLm() override = default;

  // tokens: [batch, seq] int64 token ids in [0, vocab_size), seq <= max_seq_len.
  // Returns logits [batch, seq, vocab_size]; position t depends only on tokens 0..t.
  // Throws c10::Error on bad shapes (callers at module boundaries catch it).
  virtual torch::Tensor Forward(const torch::Tensor& tokens) = 0;

  // The dimensions this model was built with.
  const ModelConfig& config() const { return config_; }

  // Activation recompute of the modules the plan names (ir::Training.recompute_modules, made by
  // planner/model_params.h RecomputeModules), replacing any earlier set: a whole block,
  // "transformer.h.N" (gpt2) / "model.layers.N" (llama), keeps only its input and re-runs in
  // backward; a block's attention core, "transformer.h.N.attn.core" / "model.layers.N.self_attn.core",
  // keeps only q, k, v (executor/train/recompute.h). Gradients are bitwise those without recompute.
  // Errors: InvalidArgument "recompute module NAME is not a block or attention core of this
  // ARCH model (blocks PREFIX0 … PREFIX{L-1})"; on error nothing changes.
  absl::Status SetRecomputeModules(const std::vector<std::string>& modules);

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
  // Whether SetRecomputeModules named block `layer` / its attention core.
  bool RecomputesBlock(size_t layer) const {
    return layer < recompute_block_.size() && recompute_block_[layer];
  }
  bool RecomputesAttentionCore(size_t layer) const {
    return layer < recompute_core_.size() && recompute_core_[layer];
  }

  ModelConfig config_;
  UnitHooks* hooks_ = nullptr;
  std::vector<bool> recompute_block_;
  std::vector<bool> recompute_core_;
};

// Scaled dot-product attention with a causal mask (Vaswani et al. 2017): softmax(q k^T / sqrt(d)
// + mask) v where mask is -inf above the diagonal. q, k, v: [batch, heads, seq, head_dim] (k and v
// already expanded to the query heads). Returns [batch, heads, seq, head_dim].
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// CausalAttention, checkpointed when `recompute` (selective recompute, Korthikanti et al. 2022
// §4.1): forward keeps only q, k and v; backward recomputes the scores and softmax.
torch::Tensor AttentionCore(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            bool recompute);

// Builds the model for config.arch on the CPU and initializes it from seed, identically on every
// rank and run: every weight matrix and embedding ~ Normal(0, 0.02), biases 0, norm weights 1,
// LayerNorm biases 0; GPT-2's attn.c_proj and mlp.c_proj weights ~ Normal(0, 0.02/sqrt(2L))
// (Radford et al. 2019, section 2.3; Hugging Face GPT2PreTrainedModel._init_weights). Parameters
// are drawn in named_parameters() order from one generator seeded with seed, so results do not
// depend on the global RNG. Errors: InvalidArgument from ValidateModelConfig.
absl::StatusOr<std::shared_ptr<CausalLm>> BuildCausalLm(const ModelConfig& config, uint64_t seed);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_CAUSAL_LM_H_
