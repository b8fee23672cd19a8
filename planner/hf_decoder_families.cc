// Module trees of decoder-only families (phi, phi-msft: counted only; qwen3, gemma2, gemma3_text,
// phi3, olmo2: also planned, these trees checking the planner's counts), as transformers'
// modeling_{qwen3,gemma2,gemma3,phi3,olmo2,phi}.py build them, and phi-2's legacy "phi-msft"
// remote code (microsoft/phi-2 modeling_phi.py before the move to transformers' PhiModel; the
// same tensors under other names). Parameter totals are checked against published counts in
// tests/planner/hf_architectures_test.cc.
#include <utility>

#include "planner/hf_architectures.h"

namespace accel::planner {
namespace {

// The dimensions a decoder block is built from.
struct DecDims {
  std::string type;  // model_type
  int64_t vocab = 0, h = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;
  int64_t rotary_dim = 0;  // elements of the rotary embedding (head_dim · partial_rotary_factor)
  bool attention_bias = false;
  bool tied = false;
  bool qk_layernorm = false;  // phi
};

ModuleNode DecRmsNorm(std::string name, int64_t dim, const std::string& prefix) {
  return NormModule(std::move(name), dim, false, prefix + "RMSNorm");
}

// The rotary embedding module: one float32 buffer inv_freq of rotary_dim / 2 elements
// (non-persistent, counted by Accelerate).
ModuleNode DecRotary(std::string name, const std::string& cls, int64_t rotary_dim) {
  ModuleNode node{std::move(name), cls, {}, {}};
  node.tensors.push_back({"inv_freq", rotary_dim / 2, 4, true});
  return node;
}

// q/k/v/o projections of the llama-style attention (qwen3, gemma, olmo2), with the per-head
// (qwen3, gemma3) or full-width (olmo2) q/k RMSNorms.
ModuleNode DecAttention(const DecDims& m, const std::string& prefix) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  ModuleNode attn = ContainerModule(
      "self_attn", prefix + "Attention",
      {LinearModule("q_proj", m.h, q, m.attention_bias), LinearModule("k_proj", m.h, kv, m.attention_bias),
       LinearModule("v_proj", m.h, kv, m.attention_bias), LinearModule("o_proj", q, m.h, m.attention_bias)});
  if (m.type == "qwen3" || m.type == "gemma3_text") {
    attn.children.push_back(DecRmsNorm("q_norm", m.head_dim, prefix));
    attn.children.push_back(DecRmsNorm("k_norm", m.head_dim, prefix));
  } else if (m.type == "olmo2") {
    attn.children.push_back(DecRmsNorm("q_norm", q, prefix));
    attn.children.push_back(DecRmsNorm("k_norm", kv, prefix));
  }
  return attn;
}

ModuleNode DecGatedMlp(const DecDims& m, const std::string& prefix) {
  return ContainerModule("mlp", prefix + "MLP",
                         {LinearModule("gate_proj", m.h, m.ffn, false), LinearModule("up_proj", m.h, m.ffn, false),
                          LinearModule("down_proj", m.ffn, m.h, false)});
}

// One block of qwen3 / gemma2 / gemma3_text / olmo2: attention, MLP and the family's norms
// (qwen3: input + post-attention; gemma: those and pre/post-feedforward; olmo2: post-attention
// and post-feedforward only).
ModuleNode DecLlamaStyleBlock(const DecDims& m, const std::string& prefix) {
  ModuleNode block = ContainerModule("layer", prefix + "DecoderLayer", {DecAttention(m, prefix), DecGatedMlp(m, prefix)});
  if (m.type != "olmo2") block.children.push_back(DecRmsNorm("input_layernorm", m.h, prefix));
  block.children.push_back(DecRmsNorm("post_attention_layernorm", m.h, prefix));
  if (m.type == "gemma2" || m.type == "gemma3_text") block.children.push_back(DecRmsNorm("pre_feedforward_layernorm", m.h, prefix));
  if (m.type != "qwen3") block.children.push_back(DecRmsNorm("post_feedforward_layernorm", m.h, prefix));
  return block;
}

// Phi3DecoderLayer: fused qkv_proj (h → (a + 2·kv)·d) and gate_up_proj (h → 2·ffn), no biases.
ModuleNode DecPhi3Block(const DecDims& m) {
  const int64_t q = m.heads * m.head_dim, qkv = q + 2 * m.kv_heads * m.head_dim;
  ModuleNode attn = ContainerModule("self_attn", "Phi3Attention",
                                    {LinearModule("o_proj", q, m.h, false), LinearModule("qkv_proj", m.h, qkv, false)});
  ModuleNode mlp = ContainerModule("mlp", "Phi3MLP", {LinearModule("gate_up_proj", m.h, 2 * m.ffn, false),
                                                      LinearModule("down_proj", m.ffn, m.h, false)});
  return ContainerModule("layer", "Phi3DecoderLayer",
                         {attn, mlp, DecRmsNorm("input_layernorm", m.h, "Phi3"),
                          DecRmsNorm("post_attention_layernorm", m.h, "Phi3")});
}

// PhiDecoderLayer: q/k/v/dense with biases (optional per-head q/k LayerNorms), fc1/fc2 with
// biases and one LayerNorm, attention and MLP in parallel.
ModuleNode DecPhiBlock(const DecDims& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  ModuleNode attn = ContainerModule(
      "self_attn", "PhiAttention",
      {LinearModule("q_proj", m.h, q, true), LinearModule("k_proj", m.h, kv, true),
       LinearModule("v_proj", m.h, kv, true), LinearModule("dense", q, m.h, true)});
  if (m.qk_layernorm) {
    attn.children.push_back(NormModule("q_layernorm", m.head_dim, true, "LayerNorm"));
    attn.children.push_back(NormModule("k_layernorm", m.head_dim, true, "LayerNorm"));
  }
  ModuleNode mlp = ContainerModule("mlp", "PhiMLP", {LinearModule("fc1", m.h, m.ffn, true),
                                                     LinearModule("fc2", m.ffn, m.h, true)});
  return ContainerModule("layer", "PhiDecoderLayer", {attn, mlp, NormModule("input_layernorm", m.h, true, "LayerNorm")});
}

// phi-2's legacy ParallelBlock: ln, mixer (fused Wqkv, out_proj, biases), mlp fc1/fc2.
ModuleNode DecPhiMsftBlock(const DecDims& m) {
  const int64_t q = m.heads * m.head_dim, qkv = q + 2 * m.kv_heads * m.head_dim;
  ModuleNode mixer = ContainerModule("mixer", "MHA", {LinearModule("Wqkv", m.h, qkv, true),
                                                       LinearModule("out_proj", q, m.h, true)});
  ModuleNode mlp = ContainerModule("mlp", "MLP", {LinearModule("fc1", m.h, m.ffn, true),
                                                  LinearModule("fc2", m.ffn, m.h, true)});
  return ContainerModule("layer", "ParallelBlock", {NormModule("ln", m.h, true, "LayerNorm"), mixer, mlp});
}

// The keys of the transformers config classes (Qwen3Config, Gemma2Config, Gemma3TextConfig,
// Phi3Config, Olmo2Config, PhiConfig) with their defaults.
DecDims DecReadDims(HfConfigKeys& keys, const std::string& type) {
  DecDims m;
  m.type = type;
  const bool gemma = type == "gemma2" || type == "gemma3_text";
  m.vocab = keys.Required("vocab_size", "the vocabulary size");
  m.h = keys.Required("hidden_size", "the hidden size");
  m.layers = keys.Required("num_hidden_layers", "the number of layers");
  m.heads = keys.Required("num_attention_heads", "the number of attention heads");
  m.kv_heads = keys.Optional("num_key_value_heads", m.heads);
  m.ffn = keys.Required("intermediate_size", "the MLP hidden size");
  m.head_dim = keys.Optional("head_dim", gemma ? 256 : (m.heads > 0 ? m.h / m.heads : 0));
  m.attention_bias = keys.Flag("attention_bias", false);
  m.tied = keys.Flag("tie_word_embeddings", gemma);
  m.qk_layernorm = type == "phi" && keys.Flag("qk_layernorm", false);
  const double partial = keys.Number("partial_rotary_factor", type == "phi" ? 0.5 : 1.0);
  m.rotary_dim = static_cast<int64_t>(static_cast<double>(m.head_dim) * partial);
  return m;
}

// phi-msft's keys (n_embd, n_layer, n_head, n_head_kv, n_inner = 4·n_embd when null,
// rotary_dim); its lm_head is never tied.
DecDims DecReadPhiMsftDims(HfConfigKeys& keys) {
  DecDims m;
  m.type = "phi-msft";
  m.vocab = keys.Required("vocab_size", "the vocabulary size");
  m.h = keys.Required("n_embd", "the hidden size");
  m.layers = keys.Required("n_layer", "the number of layers");
  m.heads = keys.Required("n_head", "the number of attention heads");
  m.kv_heads = keys.Optional("n_head_kv", m.heads);
  m.ffn = keys.Optional("n_inner", 4 * m.h);
  m.head_dim = m.heads > 0 ? m.h / m.heads : 0;
  m.rotary_dim = keys.Optional("rotary_dim", m.head_dim);
  return m;
}

std::string DecPrefix(const std::string& type) {
  if (type == "qwen3") return "Qwen3";
  if (type == "gemma2") return "Gemma2";
  if (type == "gemma3_text") return "Gemma3";
  if (type == "phi3") return "Phi3";
  if (type == "olmo2") return "Olmo2";
  return "Phi";
}

}  // namespace

// XModel: embed_tokens, the blocks, the final norm and the rotary embedding's buffer (gemma3:
// a local and a global rotary embedding, and embed_scale, a float32 scalar buffer); the causal
// LM adds lm_head (vocab × h; phi: with a bias) unless tied.
HfFamilyModel BuildDecoderFamily(HfConfigKeys& keys, const std::string& model_type) {
  const bool msft = model_type == "phi-msft";
  const DecDims m = msft ? DecReadPhiMsftDims(keys) : DecReadDims(keys, model_type);
  const std::string prefix = DecPrefix(model_type);
  const bool phi = model_type == "phi" || msft;
  ModuleNode block = model_type == "phi3" ? DecPhi3Block(m)
                     : msft               ? DecPhiMsftBlock(m)
                     : phi                ? DecPhiBlock(m)
                                          : DecLlamaStyleBlock(m, prefix);
  ModuleNode embed = msft ? ContainerModule("embd", "Embedding", {EmbeddingModule("wte", m.vocab, m.h)})
                          : EmbeddingModule("embed_tokens", m.vocab, m.h);
  if (model_type == "gemma3_text") embed.tensors.push_back({"embed_scale", 1, 4, true});
  ModuleNode model = ContainerModule(msft ? "transformer" : "", prefix + "Model",
                                     {embed, RepeatedModule(msft ? "h" : "layers", block, m.layers)});
  if (phi && !msft) model.children.push_back(NormModule("final_layernorm", m.h, true, "LayerNorm"));
  if (!phi) model.children.push_back(DecRmsNorm("norm", m.h, prefix));
  if (!msft) model.children.push_back(DecRotary("rotary_emb", prefix + "RotaryEmbedding", m.rotary_dim));
  if (model_type == "gemma3_text") {
    model.children.push_back(DecRotary("rotary_emb_local", prefix + "RotaryEmbedding", m.rotary_dim));
  }
  HfFamilyModel out{model, std::nullopt, prefix + "ForCausalLM", {prefix + "DecoderLayer"}, ""};
  if (msft) {
    out.head = ContainerModule("lm_head", "CausalLMHead", {NormModule("ln", m.h, true, "LayerNorm"),
                                                           LinearModule("linear", m.h, m.vocab, true)});
    out.no_split_modules = {"ParallelBlock"};
    out.base_attribute = "transformer";
    out.note = "phi-msft runs remote code (modeling_phi.py of microsoft/phi-2's first revisions); its "
               "rotary buffers are not counted";
  } else if (!m.tied) {
    out.head = LinearModule("lm_head", m.h, m.vocab, phi);
  }
  return out;
}

}  // namespace accel::planner
