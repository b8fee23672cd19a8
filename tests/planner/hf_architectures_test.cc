// Exact parameter counts of the Hugging Face families accel counts (planner/hf_architectures.h),
// checked against published totals, each also derived by hand below, and Accelerate's sizes
// over the module trees (planner/module_tree.h).
#include "planner/hf_architectures.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "spec/model_config.h"

namespace accel::planner {
namespace {

std::string CorpusText(const std::string& model) {
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + model + "/config.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

HfCountResult Count(const std::string& text) {
  return CountHuggingFaceModel(nlohmann::json::parse(text), text);
}

HfModelCount CountCorpus(const std::string& model) {
  HfCountResult r = Count(CorpusText(model));
  for (const HfConfigIssue& issue : r.issues) INFO(model << ": " << issue.message);
  REQUIRE(r.issues.empty());
  REQUIRE(r.count.has_value());
  return *r.count;
}

TEST_CASE("published parameter counts of the corpus configs") {
  struct Row {
    const char* model;
    const char* counted_class;
    int64_t parameters;
  };
  const Row rows[] = {
      // BertModel with pooler. Embeddings 28996·768 + 512·768 + 2·768 + 2·768 = 22,665,216;
      // layer 4·(768² + 768) + 2·768 + (768·3072 + 3072) + (3072·768 + 768) + 2·768 = 7,087,872;
      // pooler 768² + 768 = 590,592: 22,665,216 + 12·7,087,872 + 590,592.
      {"bert-base-cased", "BertModel", 108'310'272},
      // The same with a 30522-token vocabulary: + 1526·768.
      {"bert-base-uncased", "BertModel", 109'482'240},
      // h 1024, ffn 4096, 24 layers: 31,782,912 + 24·12,596,224 + 1,049,600.
      {"bert-large-uncased", "BertModel", 335'141'888},
      // Qwen3: V·h + L·(q h·a·d + k,v 2·h·kv·d + o a·d·h + q/k norms 2d + 3·h·ffn + 2h) + h,
      // d = head_dim 128. 0.6B (tied): 151936·1024 + 28·15,730,944 + 1024.
      {"Qwen3-0.6B", "Qwen3ForCausalLM", 596'049'920},
      // 8B (untied): 2·151936·4096 + 36·192,946,432 + 4096.
      {"Qwen3-8B", "Qwen3ForCausalLM", 8'190'735'360},
      // Gemma 2 (tied, head_dim 256, four norms a block): 256000·2304 + 26·77,865,984 + 2304.
      {"gemma-2-2b-it", "Gemma2ForCausalLM", 2'614'341'888},
      // Gemma 3 text: Gemma 2's block plus per-head q/k norms: 262144·1152 + 26·26,842,112 + 1152.
      {"gemma-3-1b-it", "Gemma3ForCausalLM", 999'885'952},
      // Phi-3-mini: fused qkv 3072·9216, o 3072², gate_up 3072·16384, down 8192·3072, 2 norms;
      // 2·32064·3072 + 32·113,252,352 + 3072.
      {"Phi-3-mini-4k-instruct", "Phi3ForCausalLM", 3'821'079'552},
      // OLMo 2: q/k norms over the full width (2·4096), post-norms only; 2·100352·4096 +
      // 32·202,391,552 + 4096.
      {"OLMo-2-1124-7B", "Olmo2ForCausalLM", 7'298'617'344},
      // phi-2 (legacy phi-msft keys): biases everywhere, one LayerNorm a block, lm_head with a
      // bias and its own LayerNorm: 51200·2560 + 32·78,671,360 + (2·2560 + 2560·51200 + 51200).
      {"phi-2", "PhiForCausalLM", 2'779'683'840},
      // T5 v1.1 XXL: shared 32128·4096, encoder 24·(4·4096² + 3·4096·10240 + 2·4096) + 32·64 +
      // 4096, decoder 24·(8·4096² + 3·4096·10240 + 3·4096) + 32·64 + 4096, untied lm_head
      // 32128·4096.
      {"t5-v1_1-xxl", "T5ForConditionalGeneration", 11'135'332'352},
      // CLIP ViT-L/14: text 123,060,480 + vision 303,179,776 + projections 1024·768 + 768·768 +
      // logit_scale 1.
      {"clip-vit-large-patch14", "CLIPModel", 427'616'513},
  };
  for (const Row& row : rows) {
    INFO(row.model);
    const HfModelCount c = CountCorpus(row.model);
    CHECK(c.parameters == row.parameters);
    CHECK(c.counted_class == row.counted_class);
    int64_t parts = 0;
    for (const auto& part : c.parts) parts += part.second;
    CHECK(parts == row.parameters);
  }
}

// The training path (config.json -> spec -> ir::Model -> planner::CountParameters and the
// parameter table BuildModelParams) counts OLMo 2 and Gemma exactly as their published totals
// (the counted module trees above, which match them).
TEST_CASE("planned OLMo 2, Gemma 2 and Gemma 3 text count their published parameters") {
  const struct {
    const char* model;
    int64_t parameters;
  } rows[] = {{"OLMo-2-1124-7B", 7'298'617'344}, {"gemma-2-2b-it", 2'614'341'888}, {"gemma-3-1b-it", 999'885'952}};
  for (const auto& row : rows) {
    INFO(row.model);
    absl::StatusOr<spec::ModelSpec> spec = spec::LoadModelConfig(
        std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + row.model + "/config.json");
    REQUIRE(spec.ok());
    const ir::Model model = ModelFromSpec(*spec);
    CHECK(model.parameters().total_count() == row.parameters);
    CHECK(BuildModelParams(model, 1).counts.total_count() == row.parameters);
    CHECK(CountCorpus(row.model).parameters == row.parameters);
  }
}

// Architecture values of roberta-base, google/vit-base-patch16-224 and openai/whisper-small
// (their config.json files are not in the corpus).
TEST_CASE("roberta, vit and whisper counts") {
  // RobertaModel: 50265·768 + 514·768 + 768 + 1536 + 12·7,087,872 + 590,592.
  HfCountResult roberta = Count(R"({"model_type": "roberta", "vocab_size": 50265, "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
    "max_position_embeddings": 514, "type_vocab_size": 1})");
  REQUIRE(roberta.count);
  CHECK(roberta.count->parameters == 124'645'632);
  // ViTModel with pooler: cls 768 + positions 197·768 + patch conv 768·3·256 + 768, 12 layers
  // of 7,087,872, final LayerNorm 1536, pooler 590,592.
  HfCountResult vit = Count(R"({"model_type": "vit", "hidden_size": 768, "num_hidden_layers": 12,
    "num_attention_heads": 12, "intermediate_size": 3072, "image_size": 224, "patch_size": 16})");
  REQUIRE(vit.count);
  CHECK(vit.count->parameters == 86'389'248);
  // WhisperModel: encoder convs 768·80·3 + 768 and 768·768·3 + 768, positions 1500·768,
  // 12·7,087,104, LayerNorm; decoder 51865·768 + 448·768 + 12·9,450,240 + 1536.
  HfCountResult whisper = Count(R"({"model_type": "whisper", "vocab_size": 51865, "d_model": 768,
    "encoder_layers": 12, "decoder_layers": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
    "num_mel_bins": 80, "max_source_positions": 1500, "max_target_positions": 448})");
  REQUIRE(whisper.count);
  CHECK(whisper.count->parameters == 241'734'912);
}

TEST_CASE("Accelerate's sizes for bert-base-cased") {
  const HfModelCount c = CountCorpus("bert-base-cased");
  CHECK(c.accelerate_class == "BertModel");
  // 108,310,272 parameters · 4 B + two int64 buffers of 512 (position_ids, token_type_ids):
  // accelerate's own test (tests/test_cli.py, test_transformers_model) expects 433,249,280.
  const AccelerateSizes sizes = AccelerateModelSizes(c.accelerate_model, c.no_split_modules);
  CHECK(sizes.total_bytes == 433'249'280);
  // BertEmbeddings is a no-split module in current transformers: the whole embeddings
  // module with its buffers, accelerate's test value since 4f2c2ba (May 2024).
  CHECK(sizes.largest_layer_bytes == 90'669'056);
  CHECK(sizes.largest_layer_names == std::vector<std::string>{"embeddings"});
  // The documentation's 84.95 MB is the word embedding alone (28996·768·4 B), from before
  // transformers listed BertEmbeddings in _no_split_modules (accelerate's test value then).
  const AccelerateSizes docs = AccelerateModelSizes(c.accelerate_model, {});
  CHECK(docs.largest_layer_bytes == 89'075'712);
  CHECK(docs.largest_layer_names == std::vector<std::string>{"embeddings.word_embeddings"});
  CHECK(AccelerateFormatBytes(static_cast<double>(docs.largest_layer_bytes)) == "84.95 MB");
  absl::StatusOr<std::vector<AccelerateRow>> rows =
      AccelerateEstimateTable(sizes.total_bytes, docs.largest_layer_bytes, {"float32", "float16", "int8", "int4"});
  REQUIRE(rows.ok());
  CHECK(AccelerateFormatBytes((*rows)[1].largest_layer_bytes) == "42.47 MB");
  CHECK(AccelerateFormatBytes((*rows)[2].largest_layer_bytes) == "21.24 MB");
  CHECK(AccelerateFormatBytes((*rows)[3].largest_layer_bytes) == "10.62 MB");
  // The documentation's int8/int4 training column (413.18 MB, 206.59 MB) is 4 × that dtype's
  // total, the formula of accelerate before #2581 (March 2024); current accelerate prints N/A.
  CHECK(AccelerateFormatBytes(4 * (*rows)[2].total_bytes) == "413.18 MB");
  CHECK(AccelerateFormatBytes(4 * (*rows)[3].total_bytes) == "206.59 MB");
}

TEST_CASE("Accelerate builds what auto_map names: Phi-3's causal LM, Qwen3's base model") {
  const HfModelCount phi3 = CountCorpus("Phi-3-mini-4k-instruct");
  CHECK(phi3.accelerate_class == "Phi3ForCausalLM");
  // Parameters · 4 + inv_freq (96 / 2 float32).
  CHECK(AccelerateModelSizes(phi3.accelerate_model, phi3.no_split_modules).total_bytes ==
        3'821'079'552LL * 4 + 48 * 4);
  const HfModelCount qwen = CountCorpus("Qwen3-8B");
  CHECK(qwen.accelerate_class == "Qwen3Model");
  const AccelerateSizes sizes = AccelerateModelSizes(qwen.accelerate_model, qwen.no_split_modules);
  CHECK(sizes.total_bytes == (8'190'735'360LL - 151936LL * 4096) * 4 + 64 * 4);
  CHECK(sizes.largest_layer_names == std::vector<std::string>{"embed_tokens"});
  // T5: the encoder's and decoder's embed_tokens share `shared` and own nothing.
  const HfModelCount t5 = CountCorpus("t5-v1_1-xxl");
  CHECK(t5.accelerate_class == "T5Model");
  CHECK(AccelerateModelSizes(t5.accelerate_model, t5.no_split_modules).total_bytes ==
        (11'135'332'352LL - 32128LL * 4096) * 4);
}

TEST_CASE("module tree: a split module's own tensors are no layer, the root's are") {
  ModuleNode root = ContainerModule("", "M", {ContainerModule("a", "A", {LinearModule("x", 2, 3, false)})});
  root.children[0].tensors.push_back({"p", 100});
  root.tensors = {{"scale", 1}, {"ids", 4, 8, true}};
  const AccelerateSizes split = AccelerateModelSizes(root, {});
  CHECK(split.total_bytes == (6 + 100 + 1) * 4 + 32);
  CHECK(split.largest_layer_bytes == 32);  // the root's int64 buffer beats a.x (24 B)
  CHECK(split.largest_layer_names == std::vector<std::string>{"ids"});
  const AccelerateSizes whole = AccelerateModelSizes(root, {"A"});
  CHECK(whole.largest_layer_bytes == 424);
  CHECK(whole.largest_layer_names == std::vector<std::string>{"a"});
  CHECK(ModuleParameterCount(root) == 107);
  CHECK(LargestModuleOwnParameters(root) == 100);
}

TEST_CASE("configs accel cannot count are refused with the keys, located") {
  HfCountResult relative = Count(R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8,
  "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
  "max_position_embeddings": 32, "position_embedding_type": "relative_key"})");
  REQUIRE(relative.issues.size() == 1);
  CHECK(relative.issues[0].code == "E0203");
  CHECK(relative.issues[0].message ==
        "has 'position_embedding_type' = \"relative_key\"; accel counts only \"absolute\" (relative "
        "positions add distance embeddings)");
  CHECK(relative.issues[0].location.line == 3);
  CHECK(relative.issues[0].location.column == 61);

  HfCountResult unknown = Count(R"({"model_type": "mamba"})");
  REQUIRE(unknown.issues.size() == 1);
  CHECK(unknown.issues[0].message ==
        "has model_type 'mamba'; accel plans gpt2, llama, mistral, qwen2, qwen3, phi3, olmo2, gemma2, "
        "gemma3_text, mixtral, qwen2_moe, qwen3_moe and counts bert, roberta, vit, clip, t5, whisper, phi, "
        "phi-msft");
  CHECK(unknown.issues[0].location.column == 16);

  HfCountResult missing = Count(R"({"model_type": "clip", "text_config": {"hidden_size": 8}})");
  REQUIRE(missing.issues.size() == 3);
  CHECK(missing.issues[0].message == "has no 'vision_config' object");
  CHECK(missing.issues[1].message == "has no 'text_config.intermediate_size' (the text MLP hidden size)");
  CHECK(missing.issues[2].message == "has no 'text_config.num_hidden_layers' (the text layers)");

  HfCountResult t5 = Count(R"({"model_type": "t5", "vocab_size": 10, "d_model": 8, "num_heads": 2,
    "d_kv": 4, "d_ff": 16, "num_layers": 1, "feed_forward_proj": "gated-swish"})");
  REQUIRE(t5.issues.size() == 1);
  CHECK(t5.issues[0].message ==
        "has 'feed_forward_proj' = \"gated-swish\"; accel counts relu, gelu, gelu_new or silu, "
        "optionally gated-");

  HfCountResult seq2seq = Count(R"({"model_type": "qwen3", "vocab_size": 10, "hidden_size": 8,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16,
    "auto_map": {"AutoConfig": "c.C", "AutoModelForSeq2SeqLM": "m.M"}})");
  REQUIRE(seq2seq.issues.size() == 1);
  CHECK(seq2seq.issues[0].message ==
        "has 'auto_map' = an object; Accelerate would build AutoModelForSeq2SeqLM, which accel does "
        "not count");

  HfCountResult mistyped = Count(R"({"model_type": "qwen3", "vocab_size": "10", "hidden_size": 8,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16})");
  REQUIRE(mistyped.issues.size() == 1);
  CHECK(mistyped.issues[0].code == "E0202");
  CHECK(mistyped.issues[0].message == "has 'vocab_size' = \"10\"; it must be a positive integer");
}

}  // namespace
}  // namespace accel::planner
