#include "checkpoint/hf_config.h"

#include <catch2/catch.hpp>
#include <string>

#include "checkpoint/expert_names.h"
#include "planner/model_params.h"
#include "spec/job_spec.h"
#include "spec/model_config.h"

namespace accel::exec {
namespace {

// The plan's model message for `m`, as the planner writes it.
ir::Model DimsOf(const spec::ModelSpec& m) { return planner::ModelFromSpec(m); }

// config.json text back through accel's own reader (spec/model_config.h), arch defaults applied.
spec::ModelSpec ParseBack(const std::string& json) {
  spec::ModelConfigResult result = spec::ParseModelConfig(json);
  INFO(json);
  REQUIRE(result.issues.empty());
  REQUIRE(result.config.has_value());
  spec::ModelConfigFile& file = *result.config;
  auto is_set = [&](std::string_view field) {
    for (const std::string& f : file.fields) {
      if (f == field) return true;
    }
    return false;
  };
  spec::ApplyArchDefaults(file.model, is_set);
  return file.model;
}

void CheckSameDims(const spec::ModelSpec& a, const spec::ModelSpec& b) {
  CHECK(a.arch == b.arch);
  CHECK(a.hidden_size == b.hidden_size);
  CHECK(a.num_layers == b.num_layers);
  CHECK(a.num_heads == b.num_heads);
  CHECK(a.num_kv_heads == b.num_kv_heads);
  CHECK(a.ffn_hidden_size == b.ffn_hidden_size);
  CHECK(a.vocab_size == b.vocab_size);
  CHECK(a.max_seq_len == b.max_seq_len);
  CHECK(a.tie_word_embeddings == b.tie_word_embeddings);
  CHECK(a.norm_eps == b.norm_eps);
  CHECK(a.qkv_bias == b.qkv_bias);
  if (a.arch == spec::Arch::kLlama) CHECK(a.rope_theta == b.rope_theta);
  CHECK(planner::ModelFromSpec(a).head_dim() == planner::ModelFromSpec(b).head_dim());
  CHECK(a.qk_norm == b.qk_norm);
  // OLMo 2's and Gemma's block: the plan's variant fields, compared as the planner writes them.
  const ir::Model pa = planner::ModelFromSpec(a), pb = planner::ModelFromSpec(b);
  CHECK(pa.norm_placement() == pb.norm_placement());
  CHECK(pa.qk_norm_full_width() == pb.qk_norm_full_width());
  CHECK(pa.norm_unit_offset() == pb.norm_unit_offset());
  CHECK(pa.embedding_scale() == pb.embedding_scale());
  CHECK(pa.mlp_activation() == pb.mlp_activation());
  CHECK(pa.query_pre_attn_scalar() == pb.query_pre_attn_scalar());
  CHECK(pa.attn_logit_softcapping() == pb.attn_logit_softcapping());
  CHECK(pa.final_logit_softcapping() == pb.final_logit_softcapping());
  CHECK(pa.sliding_window() == pb.sliding_window());
  CHECK(std::vector<int64_t>(pa.sliding_window_layers().begin(), pa.sliding_window_layers().end()) ==
        std::vector<int64_t>(pb.sliding_window_layers().begin(), pb.sliding_window_layers().end()));
  CHECK(pa.rope_local_theta() == pb.rope_local_theta());
  CHECK(pa.parameters().total_count() == pb.parameters().total_count());
}

TEST_CASE("GPT-2 config.json, byte for byte") {
  ir::Model d;
  d.set_arch(ir::ARCHITECTURE_GPT2);
  d.set_hidden_size(64);
  d.set_num_layers(2);
  d.set_num_heads(4);
  d.set_num_kv_heads(4);
  d.set_ffn_hidden_size(256);
  d.set_vocab_size(256);
  d.set_max_seq_len(128);
  d.set_tie_word_embeddings(true);
  d.set_norm_eps(1e-5);
  CHECK(HuggingFaceConfigJson(d, ir::DTYPE_FP32) == R"({
  "activation_function": "gelu_new",
  "architectures": [
    "GPT2LMHeadModel"
  ],
  "attn_pdrop": 0.0,
  "embd_pdrop": 0.0,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 128,
  "n_embd": 64,
  "n_head": 4,
  "n_inner": 256,
  "n_layer": 2,
  "n_positions": 128,
  "resid_pdrop": 0.0,
  "tie_word_embeddings": true,
  "torch_dtype": "float32",
  "vocab_size": 256
}
)");
}

TEST_CASE("Llama config.json, byte for byte") {
  ir::Model d;
  d.set_arch(ir::ARCHITECTURE_LLAMA);
  d.set_hidden_size(64);
  d.set_num_layers(2);
  d.set_num_heads(4);
  d.set_num_kv_heads(2);
  d.set_ffn_hidden_size(172);
  d.set_vocab_size(250);
  d.set_padded_vocab_size(256);  // the stored rows are what config.json declares
  d.set_max_seq_len(128);
  d.set_tie_word_embeddings(false);
  d.set_norm_eps(1e-6);
  d.set_rope_theta(500000.0);
  d.set_qkv_bias(true);
  CHECK(HuggingFaceConfigJson(d, ir::DTYPE_BF16) == R"({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "attention_bias": true,
  "attention_dropout": 0.0,
  "hidden_act": "silu",
  "hidden_size": 64,
  "intermediate_size": 172,
  "max_position_embeddings": 128,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 256
}
)");
}

TEST_CASE("real configs survive config.json -> dims -> config.json -> dims") {
  const std::string corpus = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/";
  const std::string examples = std::string(ACCEL_SOURCE_ROOT) + "/examples/models/";
  for (const std::string& path :
       {corpus + "gpt2", corpus + "gpt2-medium", corpus + "gpt2-xl", corpus + "Llama-2-7b-hf",
        corpus + "Llama-3.1-8B-Instruct", corpus + "TinyLlama-1.1B-Chat-v1.0", corpus + "Mistral-7B-Instruct-v0.1",
        corpus + "Qwen2-0.5B-Instruct", corpus + "Qwen3-0.6B", corpus + "Qwen3-8B", corpus + "Qwen3-30B-A3B",
        corpus + "OLMo-2-1124-7B", corpus + "gemma-2-2b-it", corpus + "gemma-3-1b-it", examples + "Llama-2-70b-hf",
        examples + "gpt2-xl", examples + "qwen3-tiny", examples + "olmo2-tiny", examples + "gemma2-tiny"}) {
    INFO(path);
    absl::StatusOr<spec::ModelSpec> original = spec::LoadModelConfig(path + "/config.json");
    REQUIRE(original.ok());
    CheckSameDims(*original, ParseBack(HuggingFaceConfigJson(DimsOf(*original), ir::DTYPE_FP32)));
  }
}

TEST_CASE("a dense model with q/k norms is written as Qwen3 with its head_dim") {
  absl::StatusOr<spec::ModelSpec> qwen3 =
      spec::LoadModelConfig(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/Qwen3-0.6B/config.json");
  REQUIRE(qwen3.ok());
  const ir::Model d = DimsOf(*qwen3);
  CHECK(HuggingFaceModelType(d) == "qwen3");
  const std::string json = HuggingFaceConfigJson(d, ir::DTYPE_BF16);
  CHECK_THAT(json, Catch::Contains(R"("model_type": "qwen3")") && Catch::Contains(R"("Qwen3ForCausalLM")") &&
                       Catch::Contains(R"("head_dim": 128)") && Catch::Contains(R"("use_sliding_window": false)"));
}

TEST_CASE("OLMo 2 and Gemma are written with their own model types and keys") {
  const std::string corpus = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/";
  absl::StatusOr<spec::ModelSpec> olmo2 = spec::LoadModelConfig(corpus + "OLMo-2-1124-7B/config.json");
  REQUIRE(olmo2.ok());
  CHECK(HuggingFaceModelType(DimsOf(*olmo2)) == "olmo2");
  CHECK_THAT(HuggingFaceConfigJson(DimsOf(*olmo2), ir::DTYPE_FP32),
             Catch::Contains(R"("model_type": "olmo2")") && Catch::Contains(R"("Olmo2ForCausalLM")"));
  absl::StatusOr<spec::ModelSpec> gemma2 = spec::LoadModelConfig(corpus + "gemma-2-2b-it/config.json");
  REQUIRE(gemma2.ok());
  const std::string json = HuggingFaceConfigJson(DimsOf(*gemma2), ir::DTYPE_BF16);
  CHECK(HuggingFaceModelType(DimsOf(*gemma2)) == "gemma2");
  CHECK_THAT(json, Catch::Contains(R"("Gemma2ForCausalLM")") && Catch::Contains(R"("attn_logit_softcapping": 50.0)") &&
                       Catch::Contains(R"("final_logit_softcapping": 30.0)") &&
                       Catch::Contains(R"("hidden_activation": "gelu_pytorch_tanh")") &&
                       !Catch::Contains(R"("hidden_act")"));
  absl::StatusOr<spec::ModelSpec> gemma3 = spec::LoadModelConfig(corpus + "gemma-3-1b-it/config.json");
  REQUIRE(gemma3.ok());
  CHECK(HuggingFaceModelType(DimsOf(*gemma3)) == "gemma3_text");
  CHECK_THAT(HuggingFaceConfigJson(DimsOf(*gemma3), ir::DTYPE_BF16),
             Catch::Contains(R"("attn_logit_softcapping": null)") && Catch::Contains(R"("sliding_window_pattern": 6)") &&
                 Catch::Contains(R"("rope_local_base_freq": 10000.0)"));
}

TEST_CASE("untied GPT-2 and tied Llama round trip too") {
  spec::ModelSpec gpt2;
  gpt2.arch = spec::Arch::kGpt2;
  gpt2.hidden_size = 48;
  gpt2.num_layers = 3;
  gpt2.num_heads = 6;
  gpt2.num_kv_heads = 6;
  gpt2.ffn_hidden_size = 100;  // not 4h
  gpt2.vocab_size = 300;
  gpt2.max_seq_len = 64;
  gpt2.tie_word_embeddings = false;
  gpt2.norm_eps = 1e-6;
  CheckSameDims(gpt2, ParseBack(HuggingFaceConfigJson(DimsOf(gpt2), ir::DTYPE_FP32)));
  spec::ModelSpec llama = gpt2;
  llama.arch = spec::Arch::kLlama;
  llama.num_kv_heads = 3;
  llama.tie_word_embeddings = true;
  llama.rope_theta = 1e6;
  CheckSameDims(llama, ParseBack(HuggingFaceConfigJson(DimsOf(llama), ir::DTYPE_FP32)));
}

}  // namespace
}  // namespace accel::exec

namespace accel::exec {
namespace {

// The MoE fields of two models, as accel reads them.
void CheckSameMoe(const spec::ModelSpec& a, const spec::ModelSpec& b) {
  CHECK(a.moe.num_experts == b.moe.num_experts);
  CHECK(a.moe.experts_per_token == b.moe.experts_per_token);
  CHECK(a.moe.expert_ffn_size == b.moe.expert_ffn_size);
  CHECK(a.moe.num_shared_experts * a.moe.shared_expert_ffn_size ==
        b.moe.num_shared_experts * b.moe.shared_expert_ffn_size);
  CHECK(a.moe.norm_topk_prob == b.moe.norm_topk_prob);
  CHECK(a.moe.router_aux_loss_coef == b.moe.router_aux_loss_coef);
}

TEST_CASE("mixture-of-experts configs survive config.json -> dims -> config.json -> dims") {
  const std::string corpus = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/";
  for (const char* name : {"Mixtral-8x7B-v0.1", "Qwen1.5-MoE-A2.7B"}) {
    INFO(name);
    absl::StatusOr<spec::ModelSpec> original = spec::LoadModelConfig(corpus + name + "/config.json");
    REQUIRE(original.ok());
    const std::string json = HuggingFaceConfigJson(DimsOf(*original), ir::DTYPE_BF16);
    const spec::ModelSpec back = ParseBack(json);
    CheckSameDims(*original, back);
    CheckSameMoe(*original, back);
    CHECK(back.model_type == original->model_type);
  }
}

TEST_CASE("an inline mixture of experts is written as Mixtral, or as Qwen2-MoE with shared experts") {
  ir::Model d;
  d.set_arch(ir::ARCHITECTURE_LLAMA);
  d.mutable_moe()->set_num_experts(8);
  d.mutable_moe()->set_experts_per_token(2);
  d.mutable_moe()->set_expert_ffn_size(128);
  CHECK(HuggingFaceModelType(d) == "mixtral");
  d.mutable_moe()->add_dense_layers(0);
  CHECK(HuggingFaceModelType(d) == "qwen2_moe");
  d.mutable_moe()->clear_dense_layers();
  d.mutable_moe()->set_num_shared_experts(1);
  CHECK(HuggingFaceModelType(d) == "qwen2_moe");
  d.set_model_type("qwen3_moe");
  CHECK(HuggingFaceModelType(d) == "qwen3_moe");
  d.clear_moe();
  CHECK(HuggingFaceModelType(d) == "llama");
}

TEST_CASE("per-expert Hugging Face names of the grouped expert tensors") {
  const std::optional<GroupedExpertName> g = ParseGroupedExpert("model.layers.3.mlp.experts.down_proj");
  REQUIRE(g.has_value());
  CHECK(g->block == "model.layers.3");
  CHECK(PerExpertName(*g, 5, ExpertNaming::kQwen) == "model.layers.3.mlp.experts.5.down_proj.weight");
  CHECK(PerExpertName(*g, 5, ExpertNaming::kMixtral) == "model.layers.3.block_sparse_moe.experts.5.w2.weight");
  CHECK(PerExpertName(*ParseGroupedExpert("model.layers.0.mlp.experts.gate_proj"), 0, ExpertNaming::kMixtral) ==
        "model.layers.0.block_sparse_moe.experts.0.w1.weight");
  CHECK(PerExpertName(*ParseGroupedExpert("model.layers.0.mlp.experts.up_proj"), 1, ExpertNaming::kMixtral) ==
        "model.layers.0.block_sparse_moe.experts.1.w3.weight");
  CHECK_FALSE(ParseGroupedExpert("model.layers.0.mlp.gate_proj.weight").has_value());
  CHECK_FALSE(ParseGroupedExpert("model.layers.0.mlp.shared_expert.gate_proj.weight").has_value());
  CHECK(HuggingFaceName("model.layers.2.mlp.gate.weight", ExpertNaming::kMixtral) ==
        "model.layers.2.block_sparse_moe.gate.weight");
  CHECK(HuggingFaceName("model.layers.2.mlp.gate.weight", ExpertNaming::kQwen) == "model.layers.2.mlp.gate.weight");
  CHECK(HuggingFaceName("model.layers.2.mlp.shared_expert.gate_proj.weight", ExpertNaming::kMixtral) ==
        "model.layers.2.mlp.shared_expert.gate_proj.weight");
  CHECK(ExpertNamingOf("mixtral") == ExpertNaming::kMixtral);
  CHECK(ExpertNamingOf("qwen3_moe") == ExpertNaming::kQwen);
}

}  // namespace
}  // namespace accel::exec
