#include "planner/model_params.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include "spec/model_config.h"

namespace accel::planner {
namespace {

ir::Model Gpt2(int64_t h, int64_t layers, int64_t heads, int64_t vocab = 50257,
               int64_t positions = 1024) {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_GPT2);
  m.set_hidden_size(h);
  m.set_num_layers(layers);
  m.set_num_heads(heads);
  m.set_num_kv_heads(heads);
  m.set_head_dim(h / heads);
  m.set_ffn_hidden_size(4 * h);
  m.set_vocab_size(vocab);
  m.set_max_seq_len(positions);
  m.set_tie_word_embeddings(true);
  return m;
}

ir::Model Llama(int64_t h, int64_t layers, int64_t heads, int64_t kv, int64_t ffn, int64_t vocab,
                bool tied = false, bool qkv_bias = false) {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_LLAMA);
  m.set_hidden_size(h);
  m.set_num_layers(layers);
  m.set_num_heads(heads);
  m.set_num_kv_heads(kv);
  m.set_head_dim(h / heads);
  m.set_ffn_hidden_size(ffn);
  m.set_vocab_size(vocab);
  m.set_max_seq_len(4096);
  m.set_tie_word_embeddings(tied);
  m.set_qkv_bias(qkv_bias);
  return m;
}

// The minimal config.json reading the tests need (the CLI uses spec/'s loader).
ir::Model FromConfigJson(const std::string& name) {
  const std::string path = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + name +
                           "/config.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json c = nlohmann::json::parse(in);
  const std::string type = c.at("model_type").get<std::string>();
  if (type == "gpt2") {
    const int64_t h = c.at("n_embd"), heads = c.at("n_head");
    ir::Model m = Gpt2(h, c.at("n_layer"), heads, c.at("vocab_size"), c.at("n_positions"));
    return m;
  }
  const int64_t h = c.at("hidden_size"), heads = c.at("num_attention_heads");
  ir::Model m = Llama(h, c.at("num_hidden_layers"), heads,
                      c.value("num_key_value_heads", heads), c.at("intermediate_size"),
                      c.at("vocab_size"), c.value("tie_word_embeddings", false),
                      type == "qwen2");
  return m;
}

struct Row {
  const char* name;
  ir::Model model;
  int64_t params;
};

// docs/planner-facts.md §4, all eight rows.
std::vector<Row> FactsTable() {
  return {
      {"gpt2", Gpt2(768, 12, 12), 124439808},
      {"gpt2-medium", Gpt2(1024, 24, 16), 354823168},
      {"gpt2-large", Gpt2(1280, 36, 20), 774030080},
      {"gpt2-xl", Gpt2(1600, 48, 25), 1557611200},
      {"Llama-2-7B", Llama(4096, 32, 32, 32, 11008, 32000), 6738415616},
      {"Llama-2-13B", Llama(5120, 40, 40, 40, 13824, 32000), 13015864320},
      {"Llama-2-70B", Llama(8192, 80, 64, 8, 28672, 32000), 68976648192},
      {"Llama-3-8B", Llama(4096, 32, 32, 8, 14336, 128256), 8030261248},
  };
}

TEST_CASE("closed form and parameter table reproduce docs/planner-facts.md §4 exactly") {
  for (const Row& row : FactsTable()) {
    INFO(row.name);
    const ir::ParameterCount closed = CountParameters(row.model);
    CHECK(closed.total_count() == row.params);
    const ModelParams table = BuildModelParams(row.model, 1);
    CHECK(table.counts.total_count() == row.params);
    CHECK(FullCount(table.embedding) + [&] {
      int64_t sum = 0;
      for (const auto& block : table.layers) sum += FullCount(block);
      return sum;
    }() + FullCount(table.head) == row.params);
    CHECK(table.counts.SerializeAsString() == closed.SerializeAsString());
    // With tp = 1 and no padding difference the per-rank count is the full count up to the
    // padded vocabulary rows.
    CHECK(LocalCount(table.layers.front()) == closed.per_layer_count());
  }
}

TEST_CASE("block formulas: GPT-2 12h^2 + 13h, Llama 2h^2 + 2h(kv h/a) + 3h ffn + 2h") {
  const ir::ParameterCount g = CountParameters(Gpt2(768, 12, 12));
  CHECK(g.per_layer_count() == 12 * 768 * 768 + 13 * 768);
  CHECK(g.embedding_count() == 50257 * 768);
  CHECK(g.position_embedding_count() == 1024 * 768);
  CHECK(g.final_norm_count() == 2 * 768);
  CHECK(g.lm_head_count() == 0);
  const ir::ParameterCount l = CountParameters(Llama(8192, 80, 64, 8, 28672, 32000));
  CHECK(l.per_layer_count() == 2 * 8192LL * 8192 + 2 * 8192LL * (8 * 8192 / 64) + 3 * 8192LL * 28672 + 2 * 8192);
  CHECK(l.lm_head_count() == 32000LL * 8192);
}

TEST_CASE("real config.json files from the corpus give the published counts") {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"gpt2", 124439808},          {"gpt2-medium", 354823168},
      {"gpt2-large", 774030080},    {"gpt2-xl", 1557611200},
      {"Llama-2-7b-hf", 6738415616}, {"Llama-2-13b-hf", 13015864320},
      {"Llama-2-70b-hf", 68976648192}, {"Llama-3.1-8B-Instruct", 8030261248},
      {"Qwen2-0.5B-Instruct", 494032768},
  };
  for (const auto& [name, expected] : cases) {
    INFO(name);
    const ir::Model model = FromConfigJson(name);
    CHECK(CountParameters(model).total_count() == expected);
    CHECK(BuildModelParams(model, 1).counts.total_count() == expected);
  }
}

TEST_CASE("Qwen2-0.5B: tied head, q/k/v biases") {
  const ModelParams p = BuildModelParams(Llama(896, 24, 14, 2, 4864, 151936, true, true), 1);
  CHECK(p.counts.total_count() == 494032768);
  CHECK(p.counts.lm_head_count() == 0);
  std::set<std::string> names;
  for (const ParamInfo& i : p.layers[0]) names.insert(i.name);
  CHECK(names.count("model.layers.0.self_attn.q_proj.bias") == 1);
  CHECK(names.count("model.layers.0.self_attn.k_proj.bias") == 1);
  CHECK(names.count("model.layers.0.self_attn.v_proj.bias") == 1);
  CHECK(names.count("model.layers.0.self_attn.o_proj.bias") == 0);
  for (const ParamInfo& i : p.head) CHECK(i.name != "lm_head.weight");
}

TEST_CASE("gpt2 names, shapes and Megatron tp split at tp = 2") {
  const ModelParams p = BuildModelParams(Gpt2(768, 12, 12), 2);
  REQUIRE(p.embedding.size() == 2);
  CHECK(p.embedding[0].name == "transformer.wte.weight");
  CHECK(p.embedding[0].shape == std::vector<int64_t>{50257, 768});
  CHECK(p.embedding[0].tp_dim == 0);
  CHECK(p.embedding[0].local_count == 50432 / 2 * 768);  // padded to a multiple of 256
  CHECK(p.embedding[1].name == "transformer.wpe.weight");
  CHECK(p.embedding[1].tp_dim == -1);
  REQUIRE(p.layers.size() == 12);
  const std::vector<ParamInfo>& b = p.layers[3];
  REQUIRE(b.size() == 12);
  auto find = [&b](const std::string& suffix) -> const ParamInfo& {
    for (const ParamInfo& i : b) {
      if (i.name == "transformer.h.3." + suffix) return i;
    }
    FAIL("missing " << suffix);
    return b.front();
  };
  CHECK(find("attn.c_attn.weight").shape == std::vector<int64_t>{768, 2304});
  CHECK(find("attn.c_attn.weight").tp_dim == 1);
  CHECK(find("attn.c_attn.weight").local_count == 768 * 1152);
  CHECK(find("attn.c_attn.bias").tp_dim == 0);
  CHECK(find("attn.c_proj.weight").tp_dim == 0);
  CHECK(find("attn.c_proj.bias").tp_dim == -1);
  CHECK(find("attn.c_proj.bias").local_count == 768);
  CHECK(find("mlp.c_fc.weight").shape == std::vector<int64_t>{768, 3072});
  CHECK(find("mlp.c_fc.weight").tp_dim == 1);
  CHECK(find("mlp.c_fc.bias").local_count == 1536);
  CHECK(find("mlp.c_proj.weight").shape == std::vector<int64_t>{3072, 768});
  CHECK(find("mlp.c_proj.weight").tp_dim == 0);
  CHECK(find("ln_1.weight").tp_dim == -1);
  CHECK(p.head.size() == 2);
  CHECK(p.head[0].name == "transformer.ln_f.weight");
  CHECK(p.counts.total_count() == 124439808);  // counts stay unpadded
}

TEST_CASE("llama names and tp split: GQA k/v width, lm_head on padded vocab") {
  const ModelParams p = BuildModelParams(Llama(8192, 80, 64, 8, 28672, 32000), 8);
  CHECK(p.embedding[0].name == "model.embed_tokens.weight");
  CHECK(p.embedding[0].local_count == 32768 / 8 * 8192);  // 32000 → 32768 (1024 multiple)
  const std::vector<ParamInfo>& b = p.layers[0];
  CHECK(b[0].name == "model.layers.0.self_attn.q_proj.weight");
  CHECK(b[0].shape == std::vector<int64_t>{8192, 8192});
  CHECK(b[0].tp_dim == 0);
  CHECK(b[1].name == "model.layers.0.self_attn.k_proj.weight");
  CHECK(b[1].shape == std::vector<int64_t>{1024, 8192});
  CHECK(b[1].local_count == 128 * 8192);
  CHECK(b[3].name == "model.layers.0.self_attn.o_proj.weight");
  CHECK(b[3].tp_dim == 1);
  CHECK(b[4].name == "model.layers.0.mlp.gate_proj.weight");
  CHECK(b[4].tp_dim == 0);
  CHECK(b[6].name == "model.layers.0.mlp.down_proj.weight");
  CHECK(b[6].shape == std::vector<int64_t>{8192, 28672});
  CHECK(b[6].tp_dim == 1);
  CHECK(b[7].name == "model.layers.0.input_layernorm.weight");
  CHECK(b[7].local_count == 8192);
  REQUIRE(p.head.size() == 2);
  CHECK(p.head[0].name == "model.norm.weight");
  CHECK(p.head[1].name == "lm_head.weight");
  CHECK(p.head[1].tp_dim == 0);
  CHECK(p.head[1].local_count == 4096 * 8192);
}

TEST_CASE("padded vocabulary follows Megatron (128 * tp)") {
  CHECK(PaddedVocabSize(50257, 1) == 50304);
  CHECK(PaddedVocabSize(50257, 2) == 50432);
  CHECK(PaddedVocabSize(32000, 1) == 32000);
  CHECK(PaddedVocabSize(32000, 8) == 32768);
}

TEST_CASE("largest module (DeepSpeed L) and largest layer (Accelerate)") {
  const ModelParams g = BuildModelParams(Gpt2(768, 12, 12), 1);
  CHECK(LargestModuleParameterCount(g) == 50257 * 768);  // wte
  CHECK(LargestLayerParameterCount(g) == 50257 * 768);   // wte beats one block (7.1M)
  const ModelParams l = BuildModelParams(Llama(4096, 32, 32, 32, 11008, 32000), 1);
  CHECK(LargestModuleParameterCount(l) == 32000 * 4096);
  CHECK(LargestLayerParameterCount(l) == 202383360);  // one decoder block
}

}  // namespace
}  // namespace accel::planner

namespace accel::planner {
namespace {

// A corpus config.json read by accel's own loader (spec/model_config.h), as `accel
// estimate-memory --model` reads it.
ir::Model CorpusModel(const std::string& name) {
  absl::StatusOr<spec::ModelSpec> spec = spec::LoadModelConfig(
      std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + name + "/config.json");
  REQUIRE(spec.ok());
  return ModelFromSpec(*spec);
}

// docs/planner-facts.md §9: total and active (per token) parameters of mixture-of-experts models,
// closed form and parameter table alike.
TEST_CASE("mixture of experts: exact total and active parameter counts") {
  struct Row {
    const char* model;
    int64_t total, active, routed;
  };
  const Row rows[] = {
      // Mixtral-8x7B (Jiang et al. 2024): 32 × (attention 41,943,040 + norms 8,192 + router
      // 32,768 + 8 experts × 3 × 4096 × 14336) + 2 × 131,072,000 + 4,096.
      {"Mixtral-8x7B-v0.1", 46'702'792'704, 12'879'925'248, 32LL * 8 * 3 * 4096 * 14336},
      // Qwen3-30B-A3B: head_dim 128 (q 4096 wide), q/k norms, 128 experts of 768, top-8; model card
      // "30.5B total, 3.3B activated".
      {"Qwen3-30B-A3B", 30'532'122'624, 3'353'032'704, 48LL * 128 * 3 * 2048 * 768},
      // Qwen1.5-MoE-A2.7B (qwen2_moe): 60 experts of 1408, top-4, one gated shared expert of 5632,
      // q/k/v biases; model card "14.3B in total and 2.7B activated".
      {"Qwen1.5-MoE-A2.7B", 14'315'784'192, 2'689'173'504, 24LL * 60 * 3 * 2048 * 1408},
  };
  for (const Row& row : rows) {
    INFO(row.model);
    const ir::Model model = CorpusModel(row.model);
    const ir::ParameterCount closed = CountParameters(model);
    CHECK(closed.total_count() == row.total);
    CHECK(closed.active_count() == row.active);
    CHECK(closed.routed_expert_count() == row.routed);
    const ModelParams table = BuildModelParams(model, 1);
    CHECK(table.counts.total_count() == row.total);
    CHECK(table.counts.active_count() == row.active);
    CHECK(table.counts.routed_expert_count() == row.routed);
    CHECK(table.counts.per_layer_count() == closed.per_layer_count());
    CHECK(FullCount(table.layers.front()) == closed.per_layer_count());
  }
}

TEST_CASE("mixture of experts: grouped expert tensors, split over tp and ep") {
  ir::Model model = CorpusModel("Mixtral-8x7B-v0.1");
  model.mutable_moe()->set_expert_parallel(4);
  const ModelParams table = BuildModelParams(model, 2);
  const std::vector<ParamInfo>& block = table.layers[0];
  auto find = [&](const std::string& suffix) -> const ParamInfo& {
    for (const ParamInfo& p : block) {
      if (p.name == "model.layers.0." + suffix) return p;
    }
    FAIL("no " << suffix);
    return block.front();
  };
  const ParamInfo& router = find("mlp.gate.weight");
  CHECK(router.shape == std::vector<int64_t>{8, 4096});
  CHECK(router.tp_dim == -1);
  CHECK_FALSE(router.routed_expert);
  const ParamInfo& gate = find("mlp.experts.gate_proj");
  CHECK(gate.shape == std::vector<int64_t>{8, 14336, 4096});
  CHECK(gate.routed_expert);
  CHECK(gate.tp_dim == 1);
  CHECK(gate.local_count == 2LL * 7168 * 4096);  // 8 / ep 4 experts, 14336 / tp 2 rows
  const ParamInfo& down = find("mlp.experts.down_proj");
  CHECK(down.shape == std::vector<int64_t>{8, 4096, 14336});
  CHECK(down.tp_dim == 2);
  CHECK(down.local_count == 2LL * 4096 * 7168);
  // A dense MLP is gone from MoE blocks.
  for (const ParamInfo& p : block) CHECK(p.name.find("mlp.gate_proj") == std::string::npos);
  // Qwen1.5-MoE: the shared expert and its gate; Qwen3: per-head q/k norms.
  const ModelParams qwen2 = BuildModelParams(CorpusModel("Qwen1.5-MoE-A2.7B"), 1);
  int shared = 0;
  for (const ParamInfo& p : qwen2.layers[0]) {
    if (p.name.find("shared_expert") != std::string::npos) ++shared;
    if (p.name == "model.layers.0.mlp.shared_expert_gate.weight") {
      CHECK(p.shape == std::vector<int64_t>{1, 2048});
    }
  }
  CHECK(shared == 4);
  const ModelParams qwen3 = BuildModelParams(CorpusModel("Qwen3-30B-A3B"), 1);
  CHECK(qwen3.layers[0][0].shape == std::vector<int64_t>{4096, 2048});  // q_proj, head_dim 128
  bool q_norm = false;
  for (const ParamInfo& p : qwen3.layers[0]) {
    if (p.name == "model.layers.0.self_attn.q_norm.weight") q_norm = p.shape == std::vector<int64_t>{128};
  }
  CHECK(q_norm);
}

TEST_CASE("mixture of experts: dense blocks keep the dense MLP (first_dense_layers, sparse_step)") {
  spec::ModelSpec m;
  m.arch = spec::Arch::kLlama;
  m.hidden_size = 64;
  m.num_layers = 6;
  m.num_heads = 4;
  m.num_kv_heads = 4;
  m.ffn_hidden_size = 96;
  m.vocab_size = 256;
  m.max_seq_len = 128;
  m.moe.num_experts = 4;
  m.moe.experts_per_token = 1;
  m.moe.expert_ffn_size = 32;
  m.moe.first_dense_layers = 1;
  m.moe.sparse_step = 2;        // blocks 1, 3, 5 are MoE; 0 is dense by first_dense_layers
  m.moe.dense_layers = {3};     // Qwen's mlp_only_layers
  const ir::Model model = ModelFromSpec(m);
  CHECK(std::vector<int64_t>(model.moe().dense_layers().begin(), model.moe().dense_layers().end()) ==
        std::vector<int64_t>{0, 2, 3, 4});
  const ir::ParameterCount c = model.parameters();
  const int64_t attention = 4 * 64 * 64 + 2 * 64;
  CHECK(c.dense_per_layer_count() == attention + 3 * 64 * 96);
  CHECK(c.per_layer_count() == attention + 4 * 64 + 3 * 4 * 64 * 32);
  CHECK(c.layers_count() == 4 * c.dense_per_layer_count() + 2 * c.per_layer_count());
  CHECK(BuildModelParams(model, 1).counts.total_count() == c.total_count());
  CHECK(c.active_count() == c.total_count() - 2 * 3 * 3 * 64 * 32);
}

}  // namespace
}  // namespace accel::planner
