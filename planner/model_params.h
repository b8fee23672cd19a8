#ifndef ACCEL_PLANNER_MODEL_PARAMS_H_
#define ACCEL_PLANNER_MODEL_PARAMS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/plan.pb.h"
#include "spec/job_spec.h"

// The parameter table of the models accel builds (gpt2, llama), with Hugging Face names and
// shapes, and the closed-form counts the table must sum to (docs/planner-facts.md §4).
namespace accel::planner {

// One parameter tensor.
struct ParamInfo {
  // Hugging Face name, e.g. "transformer.h.0.attn.c_attn.weight".
  std::string name;
  // Full shape in Hugging Face's layout, before tensor parallelism. GPT-2's Conv1D stores
  // [in, out]; nn.Linear (llama) stores [out, in].
  std::vector<int64_t> shape;
  // Elements of the full tensor (product of `shape`, unpadded vocabulary).
  int64_t count = 0;
  // Dimension split across tensor-parallel ranks (Megatron-LM, Shoeybi et al. 2019):
  // column-parallel weights (qkv, c_fc, gate/up) and their biases split the output dim,
  // row-parallel weights (o_proj, attn/mlp c_proj, down_proj) the input dim, embeddings and
  // lm_head the vocabulary dim. -1: replicated on every tp rank (norms, row-parallel biases,
  // learned position embeddings).
  int tp_dim = -1;
  // Equal blocks along tp_dim, each split separately (ir::Parameter.tp_parts): 3 for gpt2's
  // c_attn (q, k, v laid end to end), else 1.
  int tp_parts = 1;
  // Tensor-parallel ranks holding each slice (ir::Parameter.tp_replicas): ir::KvHeadReplicas
  // for the key/value projections, else 1.
  int tp_replicas = 1;
  // Elements held by one tp rank. Vocabulary-split tensors use padded_vocab_size rows, so
  // local_count · tp can exceed `count`.
  int64_t local_count = 0;
  // A grouped routed-expert tensor of a mixture-of-experts block (ir::Parameter.routed_expert):
  // dim 0 counts experts, split over expert parallel; local_count is one ep rank's E / ep of
  // them per tp rank.
  bool routed_expert = false;
  // Replicated over tp but with a tp-partial gradient (ir::Parameter.tp_partial_grad).
  bool tp_partial_grad = false;
};

// Every parameter of a model grouped the way pipeline stages and shard units take them.
struct ModelParams {
  // Token embedding (and gpt2's learned position embedding).
  std::vector<ParamInfo> embedding;
  // One entry per transformer block, in order.
  std::vector<std::vector<ParamInfo>> layers;
  // Final norm and, when untied, lm_head.weight. A tied head adds no parameter.
  std::vector<ParamInfo> head;
  // Exact counts by component with the configured (unpadded) vocabulary; equal to
  // CountParameters(model) and to the sum of every `count` above.
  ir::ParameterCount counts;
};

// Vocabulary rows after Megatron-LM's padding: vocab_size rounded up to a multiple of
// 128 · tp (make-vocab-size-divisible-by 128; GPT-2's 50257 → 50432 at tp = 2,
// docs/planner-facts.md §3). `tp` ≥ 1.
int64_t PaddedVocabSize(int64_t vocab_size, int64_t tp);

// Builds the parameter table of `model` for tensor-parallel degree `tp` (≥ 1).
// Names and shapes follow Hugging Face GPT2LMHeadModel and LlamaForCausalLM/Qwen2ForCausalLM:
// gpt2: transformer.{wte,wpe}.weight, transformer.h.N.{ln_1,attn.c_attn,attn.c_proj,ln_2,
// mlp.c_fc,mlp.c_proj}.{weight,bias}, transformer.ln_f.{weight,bias}, head tied unless
// tie_word_embeddings is false; llama: model.embed_tokens.weight,
// model.layers.N.self_attn.{q,k,v,o}_proj.weight (q/k/v bias when qkv_bias),
// model.layers.N.mlp.{gate,up,down}_proj.weight, model.layers.N.{input,post_attention}_layernorm
// .weight, model.norm.weight, lm_head.weight unless tied.
// Defaults for unset fields: num_kv_heads = num_heads, head_dim = hidden_size / num_heads,
// ffn_hidden_size = 4 · hidden_size, padded_vocab_size = PaddedVocabSize(vocab_size, tp) when
// the model's own value is unset or not a multiple of tp.
ModelParams BuildModelParams(const ir::Model& model, int64_t tp);

// Parameter tables shared by many plans of one model: the layout search plans thousands of
// candidates that differ only in layout, and a table depends only on the model and the tensor
// degree. Thread-safe; a returned table lives as long as the cache.
class ModelParamsCache {
 public:
  // BuildModelParams(model, tp), built on the first request for this model (all of its
  // fields, padded_vocab_size included) and tp.
  const ModelParams& Get(const ir::Model& model, int64_t tp);

 private:
  struct Entry {
    std::string model;  // serialized ir::Model
    int64_t tp = 1;
    ModelParams params;
  };
  std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

// Whether the model's blocks fuse q, k and v into self_attn.qkv_proj.weight [a·d + 2·kv·d, h] and
// gate and up into mlp.gate_up_proj.weight [2·ffn, h] (Hugging Face's Phi3Attention and Phi3MLP:
// ir::Model.model_type "phi3"). Under tensor parallelism they split as 3 and 2 equal blocks
// (ir::Parameter.tp_parts), which needs num_kv_heads = num_heads for qkv_proj.
bool FusedProjections(const ir::Model& model);

// Hugging Face module path of transformer block `layer` (0-based): "transformer.h.N" (gpt2) or
// "model.layers.N" (llama, mistral, qwen2).
std::string BlockModulePath(const ir::Model& model, int64_t layer);

// The sub-modules recompute `mode` checkpoints (ir::Training.recompute_modules), in forward
// order: NONE → none; FULL and OP → every block (BlockModulePath); SELECTIVE → every block's
// attention core, BlockModulePath + ".attn.core" (gpt2) or ".self_attn.core" (llama family).
// UNSPECIFIED gives none. Size: num_layers.
std::vector<std::string> RecomputeModules(const ir::Model& model, ir::Recompute mode);

// The ops whose outputs recompute `mode` keeps in every recomputed block
// (ir::Training.recompute_kept_outputs): OP → OpPolicyKeptOutputs (planner/recompute_policy.h);
// other modes none.
std::vector<std::string> RecomputeKeptOutputs(const ir::Model& model, ir::Recompute mode);

// The names (after "model.layers.N.") of a llama-family block's RMSNorm weights [h], in module
// order, by ir::Model.norm_placement: input_layernorm, post_attention_layernorm (Llama: the MLP's
// input norm); OLMo 2: post_attention_layernorm, post_feedforward_layernorm (on the outputs);
// Gemma: input_layernorm, post_attention_layernorm, pre_feedforward_layernorm,
// post_feedforward_layernorm (transformers' Olmo2DecoderLayer, Gemma2DecoderLayer).
std::vector<std::string> BlockNormNames(const ir::Model& model);

// Closed-form parameter counts, O(1), equal to BuildModelParams(model, 1).counts.
// GPT-2 block = 4h² + 2·h·ffn + ffn + 9h (= 12h² + 13h for ffn = 4h); total = V·h + P·h +
// L·block + 2h (+ V·h when untied). Llama block = 2·h·(a·d) + 2·h·(kv·d) + 3·h·ffn + 2h
// (+ a·d + 2·kv·d with qkv_bias, + 2·d with q/k norms, a·d + kv·d with full-width q/k norms,
// + 2h more with Gemma's four block norms), d = head_dim; total = V·h + L·block + h
// (+ V·h untied). Mixture of experts (docs/planner-facts.md §9): an MoE block replaces 3·h·ffn
// with the router E·h, the routed experts 3·E·h·fe and the shared experts 3·h·S·fs (+ h for
// their gate); active_count = total − (E − k)·3·h·fe per MoE block (Jiang et al. 2024's
// "active parameters"; Mixtral-8x7B: 46,702,792,704 total, 12,879,925,248 active).
// Source: docs/planner-facts.md §4 (Hugging Face module definitions); tied weights counted once.
ir::ParameterCount CountParameters(const ir::Model& model);

// Width of one attention head: model.head_dim when given, else hidden_size / num_heads (0 when
// num_heads is 0).
int64_t HeadDimOf(const spec::ModelSpec& m);

// Sets the llama-family block variant of `model` (ir::Model.norm_placement ...
// rope_local_theta) from the spec's (spec::DecoderVariantSpec, read from config.json):
// embedding_scale = √hidden_size when the spec scales embeddings, sliding_window_layers = the
// blocks l < num_layers with (l + 1) % sliding_window_pattern != 0 (transformers' layer_types for
// Gemma 2 and 3). A gpt2 model, or a default variant, sets nothing.
void SetDecoderVariant(const spec::ModelSpec& spec, ir::Model& model);

// The plan's model message for a spec `model:` section: arch, dimensions, head_dim =
// hidden_size / num_heads, padded_vocab_size = vocab_size (tp pads it later), and the exact
// CountParameters counts. Used by `accel estimate-memory --model config.json`.
ir::Model ModelFromSpec(const spec::ModelSpec& model);

// Sum of `local_count` (elements per tp rank) over a list of parameters.
int64_t LocalCount(const std::vector<ParamInfo>& params);

// Sum of `count` (full elements) over a list of parameters.
int64_t FullCount(const std::vector<ParamInfo>& params);

// The largest number of parameters owned directly by one module (weight + bias of one
// Linear/Conv1D/Embedding/norm, tied weights once): DeepSpeed's `largest_layer_params`
// (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs_all_live, which
// sums `m.parameters(recurse=False)` per module). Full (tp = 1) element counts.
int64_t LargestModuleParameterCount(const ModelParams& params);

// The largest unit Accelerate's `estimate-memory` treats as one layer: a whole transformer
// block (the model's no-split module), or a single embedding / norm / lm_head module
// (accelerate.utils.modeling.calculate_maximum_sizes). Full (tp = 1) element counts.
int64_t LargestLayerParameterCount(const ModelParams& params);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MODEL_PARAMS_H_
