#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/diag_codes.h"
#include "spec/model_config.h"

using namespace accel;
using namespace accel::spec;
namespace fs = std::filesystem;

namespace {

const fs::path kCorpusModels = fs::path(ACCEL_CORPUS_DIR) / "models";
const fs::path kExampleModels = fs::path(ACCEL_SOURCE_ROOT) / "examples" / "models";

std::string ModelTypeOf(const fs::path& path) {
  std::ifstream in(path);
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (!json.is_object() || !json.contains("model_type") || !json["model_type"].is_string()) return "";
  return json["model_type"].get<std::string>();
}

}  // namespace

TEST_CASE("every supported config.json in the corpus loads", "[model_config][corpus]") {
  REQUIRE(fs::is_directory(kCorpusModels));
  int loaded = 0, rejected = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(kCorpusModels)) {
    fs::path config = dir.path() / "config.json";
    if (!fs::exists(config)) continue;
    const std::string type = ModelTypeOf(config);
    const bool supported = type == "gpt2" || type == "llama" || type == "mistral" ||
                           type == "qwen2" || type == "qwen3" || type == "phi3" || type == "olmo2" ||
                           type == "gemma2" || type == "gemma3_text" || type == "mixtral" || type == "qwen2_moe" ||
                           type == "qwen3_moe";
    ModelConfigResult result = ReadModelConfig(config.string());
    INFO(config.string() << " (" << type << ")");
    if (supported) {
      REQUIRE(result.config.has_value());
      CHECK(result.issues.empty());
      const ModelSpec& m = result.config->model;
      CHECK(m.hidden_size > 0);
      CHECK(m.num_layers > 0);
      CHECK(m.num_heads > 0);
      CHECK(m.vocab_size > 0);
      CHECK(m.max_seq_len > 0);
      CHECK(m.arch == (type == "gpt2" ? Arch::kGpt2 : Arch::kLlama));
      if (type != "gpt2") CHECK(m.ffn_hidden_size > 0);
      // Qwen3, Qwen3-MoE, Gemma 3: per-head q/k norms and the config's head_dim; OLMo 2: full width.
      CHECK(m.qk_norm == (type == "qwen3" || type == "qwen3_moe" || type == "olmo2" || type == "gemma3_text"));
      if (m.qk_norm && type != "olmo2") CHECK(m.head_dim > 0);  // OLMo 2: h / heads
      ++loaded;
    } else {
      CHECK_FALSE(result.config.has_value());
      REQUIRE_FALSE(result.issues.empty());
      ++rejected;
    }
  }
  CHECK(loaded >= 15);
  CHECK(rejected >= 1);
}

TEST_CASE("gpt2-xl config.json maps onto ModelSpec", "[model_config]") {
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<ModelSpec> m =
      LoadModelConfig((kExampleModels / "gpt2-xl" / "config.json").string(), sink, sources);
  REQUIRE(m);
  CHECK(sink.empty());
  CHECK(m->arch == Arch::kGpt2);
  CHECK(m->model_type == "gpt2");
  CHECK(m->hidden_size == 1600);
  CHECK(m->num_layers == 48);
  CHECK(m->num_heads == 25);
  CHECK(m->num_kv_heads == 25);
  CHECK(m->ffn_hidden_size == 6400);
  CHECK(m->vocab_size == 50257);
  CHECK(m->max_seq_len == 1024);
  CHECK(m->tie_word_embeddings);
  CHECK(m->norm_eps == Approx(1e-5));
}

TEST_CASE("Llama 3.1 8B config.json maps onto ModelSpec", "[model_config]") {
  absl::StatusOr<ModelSpec> m =
      LoadModelConfig((kExampleModels / "Llama-3.1-8B-Instruct" / "config.json").string());
  REQUIRE(m.ok());
  CHECK(m->arch == Arch::kLlama);
  CHECK(m->hidden_size == 4096);
  CHECK(m->num_layers == 32);
  CHECK(m->num_heads == 32);
  CHECK(m->num_kv_heads == 8);
  CHECK(m->ffn_hidden_size == 14336);
  CHECK(m->vocab_size == 128256);
  CHECK(m->max_seq_len == 131072);
  CHECK_FALSE(m->tie_word_embeddings);
  CHECK_FALSE(m->qkv_bias);
  CHECK(m->rope_theta == Approx(500000.0));
}

TEST_CASE("mixture-of-experts config.json files map onto model.moe", "[model_config]") {
  absl::StatusOr<ModelSpec> mixtral =
      LoadModelConfig((kCorpusModels / "Mixtral-8x7B-v0.1" / "config.json").string());
  REQUIRE(mixtral.ok());
  CHECK(mixtral->arch == Arch::kLlama);
  CHECK(mixtral->model_type == "mixtral");
  CHECK(mixtral->moe.num_experts == 8);
  CHECK(mixtral->moe.experts_per_token == 2);
  CHECK(mixtral->moe.expert_ffn_size == 14336);  // Mixtral's experts are intermediate_size wide
  CHECK(mixtral->moe.norm_topk_prob);            // MixtralSparseMoeBlock always renormalizes
  CHECK(mixtral->moe.router_aux_loss_coef == Approx(0.02));
  CHECK(mixtral->moe.num_shared_experts == 0);
  CHECK(mixtral->moe.router_scoring == RouterScoring::kSoftmax);

  absl::StatusOr<ModelSpec> qwen2 =
      LoadModelConfig((kCorpusModels / "Qwen1.5-MoE-A2.7B" / "config.json").string());
  REQUIRE(qwen2.ok());
  CHECK(qwen2->qkv_bias);
  CHECK(qwen2->moe.num_experts == 60);
  CHECK(qwen2->moe.experts_per_token == 4);
  CHECK(qwen2->moe.expert_ffn_size == 1408);
  CHECK(qwen2->moe.num_shared_experts == 1);
  CHECK(qwen2->moe.shared_expert_ffn_size == 5632);
  CHECK(qwen2->moe.shared_expert_gate);
  CHECK_FALSE(qwen2->moe.norm_topk_prob);
  CHECK(qwen2->moe.sparse_step == 1);
  CHECK(qwen2->ffn_hidden_size == 5632);  // the dense MLP of dense blocks

  absl::StatusOr<ModelSpec> qwen3 =
      LoadModelConfig((kCorpusModels / "Qwen3-30B-A3B" / "config.json").string());
  REQUIRE(qwen3.ok());
  CHECK(qwen3->head_dim == 128);
  CHECK(qwen3->qk_norm);
  CHECK_FALSE(qwen3->qkv_bias);
  CHECK(qwen3->moe.num_experts == 128);
  CHECK(qwen3->moe.experts_per_token == 8);
  CHECK(qwen3->moe.expert_ffn_size == 768);
  CHECK(qwen3->moe.norm_topk_prob);
  CHECK(qwen3->moe.dense_layers.empty());
  CHECK(qwen3->moe.router_aux_loss_coef == Approx(0.001));
}

TEST_CASE("mixture-of-experts keys: DeepSeek's first_k_dense_replace, Qwen's mlp_only_layers, "
          "and their errors", "[model_config]") {
  ModelConfigResult r = ParseModelConfig(R"({
    "model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 256,
    "max_position_embeddings": 128, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "decoder_sparse_step": 2, "mlp_only_layers": [3], "first_k_dense_replace": 1})");
  REQUIRE(r.config);
  const MoeSpec& moe = r.config->model.moe;
  CHECK(moe.sparse_step == 2);
  CHECK(moe.dense_layers == std::vector<int64_t>{3});
  CHECK(moe.first_dense_layers == 1);
  ModelConfigResult bad = ParseModelConfig(R"({
    "model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 256,
    "max_position_embeddings": 128, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "mlp_only_layers": [7], "router_aux_loss_coef": -1})");
  CHECK_FALSE(bad.config);
  std::vector<std::string> messages;
  for (const ModelConfigIssue& i : bad.issues) messages.push_back(i.message);
  CHECK(messages == std::vector<std::string>{
                        "has no 'num_experts' (the number of routed experts)",
                        "has 'mlp_only_layers' = an array; it must be a list of layer indices below "
                        "num_hidden_layers",
                        "has 'router_aux_loss_coef' = -1; it must be a number >= 0"});
}

TEST_CASE("qwen2 configs have q/k/v bias and may tie embeddings", "[model_config]") {
  ModelConfigResult r = ParseModelConfig(R"({
    "model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
    "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": true,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0})");
  REQUIRE(r.config);
  CHECK(r.config->model.arch == Arch::kLlama);
  CHECK(r.config->model.qkv_bias);
  CHECK(r.config->model.tie_word_embeddings);
  CHECK(r.config->model.norm_eps == Approx(1e-6));
}

TEST_CASE("OLMo 2, Gemma 2 and Gemma 3 text configs map onto the block variant", "[model_config]") {
  ModelConfigResult olmo = ReadModelConfig((kCorpusModels / "OLMo-2-1124-7B" / "config.json").string());
  REQUIRE(olmo.config);
  const ModelSpec& o = olmo.config->model;
  CHECK(o.variant.norm_placement == NormPlacement::kPost);
  CHECK(o.qk_norm);
  CHECK(o.variant.qk_norm_full_width);
  CHECK_FALSE(o.tie_word_embeddings);
  CHECK(o.rope_theta == 500000.0);
  CHECK_FALSE(o.variant.norm_unit_offset);

  ModelConfigResult gemma2 = ReadModelConfig((kCorpusModels / "gemma-2-2b-it" / "config.json").string());
  REQUIRE(gemma2.config);
  const ModelSpec& g = gemma2.config->model;
  CHECK(g.variant.norm_placement == NormPlacement::kPreAndPost);
  CHECK(g.variant.norm_unit_offset);
  CHECK(g.variant.scale_embeddings);
  CHECK(g.variant.mlp_activation == MlpActivation::kGeluTanh);
  CHECK(g.head_dim == 256);
  CHECK(g.tie_word_embeddings);
  CHECK_FALSE(g.qk_norm);
  CHECK(g.variant.query_pre_attn_scalar == 256);
  CHECK(g.variant.attn_logit_softcapping == 50.0);
  CHECK(g.variant.final_logit_softcapping == 30.0);
  CHECK(g.variant.sliding_window == 4096);
  CHECK(g.variant.sliding_window_pattern == 2);
  CHECK(g.variant.rope_local_theta == 0);

  ModelConfigResult gemma3 = ReadModelConfig((kCorpusModels / "gemma-3-1b-it" / "config.json").string());
  REQUIRE(gemma3.config);
  const ModelSpec& g3 = gemma3.config->model;
  CHECK(g3.qk_norm);
  CHECK_FALSE(g3.variant.qk_norm_full_width);
  CHECK(g3.variant.attn_logit_softcapping == 0);  // null in the file
  CHECK(g3.variant.final_logit_softcapping == 0);
  CHECK(g3.variant.sliding_window == 512);
  CHECK(g3.variant.sliding_window_pattern == 6);
  CHECK(g3.variant.rope_local_theta == 10000);
  CHECK(g3.rope_theta == 1000000);

  // Gemma2Config's defaults for absent keys: head_dim 256, tied, caps 50 and 30, window 4096.
  ModelConfigResult defaults = ParseModelConfig(R"({
    "model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128})");
  REQUIRE(defaults.config);
  CHECK(defaults.config->model.head_dim == 256);
  CHECK(defaults.config->model.tie_word_embeddings);
  CHECK(defaults.config->model.variant.attn_logit_softcapping == 50.0);
  CHECK(defaults.config->model.variant.final_logit_softcapping == 30.0);
  CHECK(defaults.config->model.variant.sliding_window == 4096);
}

TEST_CASE("Gemma configs with an activation or RoPE scaling accel does not run are refused", "[model_config]") {
  ModelConfigResult act = ParseModelConfig(R"({
    "model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
    "hidden_activation": "gelu"})");
  REQUIRE(act.issues.size() == 1);
  CHECK(act.issues[0].code == codes::kModelConfigInvalid);
  CHECK(act.issues[0].message == "has 'hidden_activation' = \"gelu\"; accel runs gelu_pytorch_tanh only");
  ModelConfigResult scaling = ParseModelConfig(R"({
    "model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0}})");
  REQUIRE(scaling.issues.size() == 1);
  CHECK(scaling.issues[0].message ==
        "has 'rope_scaling' = an object; accel runs gemma3_text without RoPE scaling (null)");
  ModelConfigResult cap = ParseModelConfig(R"({
    "model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128,
    "final_logit_softcapping": -1})");
  REQUIRE(cap.issues.size() == 1);
  CHECK(cap.issues[0].message == "has 'final_logit_softcapping' = -1; it must be a number >= 0");
}

TEST_CASE("ParseModelConfig reports every problem with a code", "[model_config]") {
  {
    ModelConfigResult r = ParseModelConfig("{\n  \"model_type\": \"gpt2\",\n}\n");
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].code == codes::kModelConfigInvalid);
    CHECK(r.issues[0].location == SourceLocation{3, 1});
  }
  {
    ModelConfigResult r = ParseModelConfig(R"({"model_type": "gpt2", "n_layer": "12"})");
    CHECK_FALSE(r.config);
    // n_embd, n_head, n_positions, vocab_size missing; n_layer mistyped.
    CHECK(r.issues.size() == 5);
  }
  {
    ModelConfigResult r = ParseModelConfig(R"({"model_type": "t5"})");
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].code == codes::kModelTypeUnsupported);
  }
  {
    ModelConfigResult r = ParseModelConfig("[1, 2]");
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].message == "must hold a JSON object, got array");
  }
  {
    ModelConfigResult r = ParseModelConfig(R"({"hidden_size": 8})");
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].code == codes::kModelConfigInvalid);
  }
}

// Found with fuzz/model_config_fuzzer (fuzz/regressions/model_config_fuzzer): the messages dumped the
// offending JSON value whole, recursively, so a deeply nested one overflowed the stack.
TEST_CASE("ParseModelConfig quotes arrays and objects by kind and cuts long values", "[model_config]") {
  const std::string rest = R"(, "n_layer": 2, "n_head": 2, "n_positions": 8, "vocab_size": 16})";
  {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    ModelConfigResult r = ParseModelConfig(R"({"model_type": "gpt2", "n_embd": )" + deep + rest);
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].message == "has 'n_embd' = an array; it must be a positive integer");
  }
  {
    ModelConfigResult r = ParseModelConfig(R"({"model_type": "gpt2", "n_embd": {"a": 1})" + rest);
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].message == "has 'n_embd' = an object; it must be a positive integer");
  }
  {
    ModelConfigResult r = ParseModelConfig(R"({"model_type": "gpt2", "n_embd": ")" + std::string(100, 'x') +
                                           "\"" + rest);
    REQUIRE(r.issues.size() == 1);
    CHECK(r.issues[0].message ==
          "has 'n_embd' = \"" + std::string(59, 'x') + "...; it must be a positive integer");
  }
}

// spec/json_object.cc, shared with device profiles (found by fuzz/device_profile_fuzzer): nlohmann
// quotes the bytes it stopped at, and one that was not UTF-8 made the message unprintable as JSON.
TEST_CASE("ParseModelConfig shows a byte that is not UTF-8 in a JSON syntax error as '?'", "[model_config]") {
  ModelConfigResult r = ParseModelConfig("{\x82model_type\": \"gpt2\"}");
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].message ==
        "is not valid JSON: syntax error while parsing object key - invalid literal; last read: '{?'; "
        "expected string literal");
  CHECK(r.issues[0].location == SourceLocation{1, 2});
}

// A number too large for a double is a lexer error without a position in nlohmann's message
// (out_of_range.406): it is located at the number (found by fuzz/device_profile_fuzzer).
TEST_CASE("ParseModelConfig locates a number that overflows", "[model_config]") {
  ModelConfigResult r = ParseModelConfig("{\"model_type\": \"gpt2\",\n \"n_embd\": 1e400}");
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].message == "is not valid JSON: number overflow parsing '1e400'");
  CHECK(r.issues[0].location == SourceLocation{2, 12});
}

TEST_CASE("LoadModelConfig fails with a status for missing files", "[model_config]") {
  absl::StatusOr<ModelSpec> m = LoadModelConfig("/nonexistent/config.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == absl::StatusCode::kNotFound);
  CHECK(m.status().message() == "/nonexistent/config.json: model config cannot be read: no such file");
}
