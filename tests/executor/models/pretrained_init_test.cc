// Starting a model from Hugging Face weights (executor/models/pretrained_init.h): the weights a
// model was saved with load back into another (identical logits), and its logits match an
// independent forward pass in Python (tests/executor/models/hf_reference.py on Debian's
// python3-torch) reading the same model.safetensors, for GPT-2 and the Llama family; and under
// tensor or pipeline parallelism each rank copies only the bytes it owns out of the mapped file
// and ends with exactly its part of the whole loaded model.
#include "executor/models/pretrained_init.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "checkpoint/safetensors.h"
#include "common/remove_tree.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/models/causal_lm.h"
#include "executor/models/tensor_parallel.h"
#include "tests/executor/multi_rank.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

using accel::testing::RemoveDir;

ModelConfig Gpt2Config() {
  ModelConfig c;
  c.arch = ModelArch::kGpt2;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 4;
  c.ffn_size = 128;
  c.vocab_size = 96;
  c.max_seq_len = 16;
  return c;
}

// Saves model's parameters as model.safetensors in dir, as `accel export` lays them out.
void Save(CausalLm& model, const fs::path& dir) {
  fs::create_directories(dir);
  SafetensorsFile file;
  for (const auto& item : model.named_parameters()) {
    file.tensors.push_back(TensorToSafetensors(item.key(), item.value()).value());
  }
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
}

ModelConfig LlamaConfig(bool qwen2) {
  ModelConfig c = Gpt2Config();
  c.arch = ModelArch::kLlama;
  c.num_kv_heads = 2;  // grouped-query attention
  c.ffn_size = 88;
  c.tie_embeddings = qwen2;
  c.qkv_bias = qwen2;
  c.norm_eps = qwen2 ? 1e-6 : 1e-5;
  c.rope_theta = qwen2 ? 1e6 : 1e4;
  return c;
}

// Arguments of tests/executor/models/hf_reference.py after the file names.
std::string ReferenceArgs(const ModelConfig& c) {
  if (c.arch == ModelArch::kGpt2) return "gpt2 MODEL TOKENS LOGITS " + std::to_string(c.num_heads);
  std::ostringstream args;
  args.precision(17);
  args << "llama MODEL TOKENS LOGITS " << c.num_heads << " " << c.num_kv_heads << " " << c.norm_eps
       << " " << c.rope_theta << " " << HeadDim(c);
  if (c.block_norms != BlockNorms::kPre) args << " VARIANT";
  return args.str();
}

// hf_reference.py's VARIANT.json for an OLMo 2 or Gemma block (ModelConfig's variant fields).
std::string PretrainedVariantJson(const ModelConfig& c) {
  std::ostringstream json;
  json.precision(17);
  json << "{\"norms\": \"" << (c.block_norms == BlockNorms::kPost ? "post" : "pre_and_post") << "\", "
       << "\"unit_offset\": " << (c.norm_unit_offset ? "true" : "false") << ", "
       << "\"qk_norm_full_width\": " << (c.qk_norm_full_width ? "true" : "false") << ", "
       << "\"gelu_tanh\": " << (c.gelu_tanh_mlp ? "true" : "false") << ", "
       << "\"embedding_scale\": " << c.embedding_scale << ", \"query_pre_attn_scalar\": " << c.query_pre_attn_scalar
       << ", \"attn_softcap\": " << c.attn_logit_softcapping << ", \"final_softcap\": " << c.final_logit_softcapping
       << ", \"sliding_window\": " << c.sliding_window << ", \"rope_local_theta\": " << c.rope_local_theta
       << ", \"sliding_layers\": [";
  for (size_t i = 0; i < c.sliding_window_layers.size(); ++i) json << (i ? ", " : "") << c.sliding_window_layers[i];
  json << "]}";
  return json.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

// Saves a seeded model, loads it into a model of another seed (identical logits), and compares
// the logits with the Python reference reading the same model.safetensors.
void CheckRoundTripAndReference(const ModelConfig& config, const std::string& label) {
  INFO(label);
  const fs::path dir = fs::temp_directory_path() /
                       ("accel_pretrained_init_" + label + "_" + std::to_string(::getpid()));
  std::shared_ptr<CausalLm> source = BuildCausalLm(config, /*seed=*/11).value();
  {
    // Biases and norm weights start at 0 and 1, and weights ~ N(0, 0.02) leave attention almost
    // uniform, where positions would not matter: random vectors and weights ten times larger
    // make every term (rotary tables included) count in the comparison.
    torch::NoGradGuard no_grad;
    for (auto& item : source->named_parameters()) {
      if (item.value().dim() == 1) item.value().normal_(0.5, 0.1);
      else item.value().mul_(10.0);
    }
  }
  Save(*source, dir);
  std::shared_ptr<CausalLm> loaded =
      BuildCausalLm(config, /*seed=*/99, {}, [&dir](CausalLm& whole) {
        return LoadPretrained(whole, dir.string());
      }).value();
  const torch::Tensor tokens = torch::randint(0, config.vocab_size, {2, 12}, torch::kLong);
  torch::NoGradGuard no_grad;
  const torch::Tensor expected = source->Forward(tokens);
  const torch::Tensor logits = loaded->Forward(tokens);
  CHECK(torch::equal(expected, logits));

  {
    std::ofstream out(dir / "tokens.bin", std::ios::binary);
    const int64_t header[2] = {tokens.size(0), tokens.size(1)};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(static_cast<const char*>(tokens.contiguous().data_ptr()), tokens.numel() * 8);
  }
  std::string args = ReferenceArgs(config);
  args = Replace(args, "MODEL", (dir / "model.safetensors").string());
  args = Replace(args, "TOKENS", (dir / "tokens.bin").string());
  args = Replace(args, "LOGITS", (dir / "logits.bin").string());
  if (config.block_norms != BlockNorms::kPre) {
    std::ofstream(dir / "variant.json") << PretrainedVariantJson(config);
    args = Replace(args, "VARIANT", (dir / "variant.json").string());
  }
  const std::string command =
      "/usr/bin/python3 " ACCEL_SOURCE_ROOT "/tests/executor/models/hf_reference.py " + args;
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir / "logits.bin", std::ios::binary);
  torch::Tensor reference = torch::empty_like(logits);
  in.read(static_cast<char*>(reference.data_ptr()), reference.numel() * 4);
  REQUIRE(in.good());
  // fp32 both ways; only the order of the sums differs (the reference writes GELU's tanh formula
  // and SiLU out): differences are rounding, within 1e-5 of the logits' largest magnitude (~10
  // here); a wrong rotary base or mask moves them by O(1).
  const double scale = logits.abs().max().item<double>();
  CHECK((reference - logits).abs().max().item<double>() < 1e-5 * scale);
  RemoveDir(dir);
}

// gpt2; llama with grouped-query attention; qwen2-like with q/k/v biases and a tied head.
TEST_CASE("weights saved from one model load into another with identical logits and match an "
          "independent forward in Python for gpt2 and the llama family") {
  CheckRoundTripAndReference(Gpt2Config(), "gpt2");
  CheckRoundTripAndReference(LlamaConfig(/*qwen2=*/false), "llama");
  CheckRoundTripAndReference(LlamaConfig(/*qwen2=*/true), "qwen2");
  // Qwen3: per-head q/k norms and a head width (16) apart from hidden / heads (8), tied head.
  ModelConfig qwen3 = LlamaConfig(/*qwen2=*/false);
  qwen3.qk_norm = true;
  qwen3.head_dim = 16;
  qwen3.tie_embeddings = true;
  qwen3.norm_eps = 1e-6;
  qwen3.rope_theta = 1e6;
  CheckRoundTripAndReference(qwen3, "qwen3");
  // Phi-3: fused qkv_proj and gate_up_proj, untied head.
  ModelConfig phi3 = LlamaConfig(/*qwen2=*/false);
  phi3.fused_projections = true;
  CheckRoundTripAndReference(phi3, "phi3");
}

// OLMo 2 (norms after the sublayers, full-width q/k norms) and Gemma 2 / Gemma 3 text (four
// x̂·(1 + w) norms, √h embeddings, GeGLU, scaled, soft-capped and windowed scores, capped
// logits, Gemma 3's per-head q/k norms and local RoPE base), each against the Python reference.
// Caps and a window small enough to act on these shapes: the window 5 < 12 tokens hides keys in
// the sliding block 0; the caps 5 and 3 bend scores and logits of magnitude ~10.
TEST_CASE("olmo2, gemma2 and gemma3_text blocks match an independent forward in Python") {
  ModelConfig olmo2 = LlamaConfig(/*qwen2=*/false);
  olmo2.block_norms = BlockNorms::kPost;
  olmo2.qk_norm = true;
  olmo2.qk_norm_full_width = true;
  olmo2.norm_eps = 1e-6;
  olmo2.rope_theta = 5e5;
  CheckRoundTripAndReference(olmo2, "olmo2");
  ModelConfig gemma2 = LlamaConfig(/*qwen2=*/false);
  gemma2.block_norms = BlockNorms::kPreAndPost;
  gemma2.norm_unit_offset = true;
  gemma2.embedding_scale = std::sqrt(32.0);
  gemma2.gelu_tanh_mlp = true;
  gemma2.head_dim = 16;
  gemma2.query_pre_attn_scalar = 24;
  gemma2.attn_logit_softcapping = 5.0;
  gemma2.final_logit_softcapping = 3.0;
  gemma2.sliding_window = 5;
  gemma2.sliding_window_layers = {0};
  gemma2.tie_embeddings = true;
  gemma2.norm_eps = 1e-6;
  CheckRoundTripAndReference(gemma2, "gemma2");
  ModelConfig gemma3 = gemma2;
  gemma3.attn_logit_softcapping = 0;
  gemma3.final_logit_softcapping = 0;
  gemma3.qk_norm = true;
  gemma3.rope_theta = 1e6;
  gemma3.rope_local_theta = 1e4;
  CheckRoundTripAndReference(gemma3, "gemma3_text");
}

// The bytes of checkpoint tensor `t` that tensor-parallel rank `rank` of 2 holds of a parameter
// split as `split` whose whole extent along split.dim is `extent` (rows past the checkpoint's,
// a padded vocabulary, are not in the file). Written out here independently of TpSelection.
uint64_t RankBytes(const PretrainedTensor& t, TpSplit split, int64_t extent, int64_t rank) {
  const uint64_t bytes = t.end - t.begin;
  if (split.dim < 0) return bytes;
  const int64_t have = t.shape[split.dim];
  const int64_t block = extent / split.parts, slice = block / 2;
  int64_t kept = 0;
  for (int64_t p = 0; p < split.parts; ++p) {
    kept += std::max<int64_t>(0, std::min(have, p * block + (rank + 1) * slice) -
                                     std::min(have, p * block + rank * slice));
  }
  return bytes / static_cast<uint64_t>(have) * static_cast<uint64_t>(kept);
}

using Parameters = std::map<std::string, torch::Tensor>;

Parameters ParametersOf(CausalLm& model) {
  Parameters out;
  for (const auto& item : model.named_parameters()) out[item.key()] = item.value().detach().clone();
  return out;
}

// ReadPretrainedPart on flat pieces (as ZeRO shards cut them, at boundaries inside rows) of every
// tensor-parallel slice of every parameter, under tp 1 and 2: the pieces put together are the
// slice of the whole loaded model `whole`, rows past the checkpoint's `checkpoint_vocab` rows are
// left alone, and each piece copied its own elements plus at most one partial row at each end.
void CheckFlatPieces(const fs::path& dir, CausalLm& whole, int64_t checkpoint_vocab, torch::ScalarType dtype) {
  constexpr float kUntouched = -7.0f;
  PretrainedCheckpoint checkpoint = PretrainedCheckpoint::Open(dir.string()).value();
  const int64_t element = torch::elementSize(dtype);
  for (int64_t tp : {1, 2}) {
    for (int64_t rank = 0; rank < tp; ++rank) {
      for (const auto& item : whole.named_parameters()) {
        INFO("tp " << tp << " rank " << rank << ": " << item.key());
        torch::Tensor expected_whole = item.value().detach().clone();
        const bool vocab_rows = item.key() == whole.WordEmbeddingName() || item.key() == "lm_head.weight";
        if (vocab_rows) expected_whole.narrow(0, checkpoint_vocab, expected_whole.size(0) - checkpoint_vocab).fill_(kUntouched);
        const TpSplit split = tp > 1 ? whole.TensorParallelSplit(item.key()) : TpSplit{};
        const torch::Tensor expected = TpSlice(expected_whole, split, rank, tp);
        torch::Tensor assembled = torch::full_like(expected, kUntouched).reshape({-1});
        const int64_t n = expected.numel();
        const int64_t row = expected.dim() <= 1 ? 1 : n / expected.size(0);
        const int64_t cuts[4] = {0, n / 3 + 1, 2 * n / 3 - 1, n};
        for (int piece = 0; piece < 3; ++piece) {
          PretrainedPart part;
          part.local.assign(expected.sizes().begin(), expected.sizes().end());
          part.split = split;
          part.tp_rank = rank;
          part.tp_size = tp;
          part.begin = cuts[piece];
          part.end = cuts[piece + 1];
          const uint64_t before = checkpoint.stats().bytes_copied;
          REQUIRE(ReadPretrainedPart(checkpoint, dir.string(), item.key(), part,
                                     assembled.narrow(0, part.begin, part.end - part.begin)).ok());
          const uint64_t copied = checkpoint.stats().bytes_copied - before;
          const int64_t rows = (part.end + row - 1) / row - part.begin / row;
          CHECK(copied <= static_cast<uint64_t>(rows * row * element));
          CHECK(static_cast<int64_t>(copied) < (part.end - part.begin + 2 * row) * element);
        }
        CHECK(torch::equal(assembled.view(expected.sizes()), expected));
      }
    }
  }
}

// Saves a seeded model (its embedding cut to `checkpoint_vocab` rows, as a checkpoint of an
// unpadded vocabulary, and its tensors as `dtype`), loads it whole, then on 2 tensor-parallel
// ranks and on 2 pipeline stages: every part equals the whole model's part bitwise, and each rank
// copied exactly the bytes of its part out of the mapped file.
void CheckRanksReadTheirPart(const ModelConfig& config, int64_t checkpoint_vocab, torch::ScalarType dtype,
                             const std::string& label) {
  INFO(label);
  const fs::path dir = fs::temp_directory_path() /
                       ("accel_pretrained_parts_" + label + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::shared_ptr<CausalLm> source = BuildCausalLm(config, /*seed=*/11).value();
    SafetensorsFile file;
    for (const auto& item : source->named_parameters()) {
      torch::Tensor value = item.value().detach();
      if (item.key() == source->WordEmbeddingName() || item.key() == "lm_head.weight") {
        value = value.narrow(0, 0, checkpoint_vocab);
      }
      file.tensors.push_back(TensorToSafetensors(item.key(), value.to(dtype)).value());
    }
    std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  }
  const PretrainedIndex index = OpenPretrained(dir.string()).value();
  auto load = [&dir](PretrainedReadStats* stats) {
    return [&dir, stats](CausalLm& kept) { return LoadPretrained(kept, dir.string(), stats); };
  };

  PretrainedReadStats whole_stats;
  std::shared_ptr<CausalLm> whole = BuildCausalLm(config, /*seed=*/99, {}, load(&whole_stats)).value();
  uint64_t file_bytes = 0;
  for (const auto& [name, t] : index) file_bytes += t.end - t.begin;
  CHECK(whole_stats.bytes_copied == file_bytes);
  CHECK(whole_stats.tensor_bytes == file_bytes);

  // Tensor parallelism 2: rank r holds TpSlice(whole, r) and copied only those bytes.
  std::vector<Parameters> tp_parts(2);
  std::vector<PretrainedReadStats> tp_stats(2);
  std::vector<std::string> errors = testing::RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    absl::StatusOr<std::shared_ptr<Communicator>> comm = rdzv.CreateWorld(CommBackend::kGloo);
    testing::Ok(comm.status());
    absl::StatusOr<std::shared_ptr<CausalLm>> m =
        BuildCausalLm(config, /*seed=*/99, TensorParallel{*comm, false}, load(&tp_stats[rank]));
    testing::Ok(m.status());
    tp_parts[rank] = ParametersOf(**m);
  });
  for (const std::string& e : errors) REQUIRE(e == "");
  uint64_t split_bytes = 0, replicated_bytes = 0;
  uint64_t expected[2] = {0, 0};
  for (const auto& item : whole->named_parameters()) {
    INFO(item.key());
    const TpSplit split = whole->TensorParallelSplit(item.key());
    const PretrainedTensor& t = *FindPretrained(index, item.key());
    (split.dim < 0 ? replicated_bytes : split_bytes) += t.end - t.begin;
    for (int64_t rank = 0; rank < 2; ++rank) {
      CHECK(torch::equal(tp_parts[rank].at(item.key()), TpSlice(item.value(), split, rank, 2)));
      expected[rank] += RankBytes(t, split, split.dim < 0 ? 0 : item.value().size(split.dim), rank);
    }
  }
  for (int rank = 0; rank < 2; ++rank) {
    INFO("tp rank " << rank << ": copied " << tp_stats[rank].bytes_copied << " of " << file_bytes
                    << " bytes (" << replicated_bytes << " replicated, " << split_bytes << " split), "
                    << tp_stats[rank].pages_touched << " pages");
    CHECK(tp_stats[rank].bytes_copied == expected[rank]);
    // About half of the split tensors (exactly half but for the padded vocabulary's rows).
    const double split_share = static_cast<double>(tp_stats[rank].bytes_copied - replicated_bytes) /
                               static_cast<double>(split_bytes);
    CHECK(split_share == Approx(0.5).margin(0.05));
  }
  // Every split byte was copied by exactly one rank.
  CHECK(tp_stats[0].bytes_copied + tp_stats[1].bytes_copied == file_bytes + replicated_bytes);

  // Pipeline parallelism 2: each stage holds the whole model's tensors of its blocks and copied
  // only those (a tied head's copy reads the word embedding).
  const StageSpan spans[2] = {{0, 1, true, false}, {1, -1, false, true}};
  uint64_t stage_bytes_total = 0;
  for (int stage = 0; stage < 2; ++stage) {
    INFO("stage " << stage);
    PretrainedReadStats stats;
    std::shared_ptr<CausalLm> part = BuildCausalLm(config, /*seed=*/99, {}, load(&stats), spans[stage]).value();
    const Parameters whole_parameters = ParametersOf(*whole);
    uint64_t stage_bytes = 0;
    for (const auto& item : part->named_parameters()) {
      INFO(item.key());
      const bool copy = whole_parameters.count(item.key()) == 0;  // a tied head's copy
      const std::string source = copy ? whole->WordEmbeddingName() : item.key();
      CHECK(torch::equal(item.value(), whole_parameters.at(source)));
      const PretrainedTensor& t = *FindPretrained(index, source);
      stage_bytes += t.end - t.begin;
    }
    INFO("copied " << stats.bytes_copied << " of " << file_bytes << " bytes, " << stats.pages_touched
                   << " pages");
    CHECK(stats.bytes_copied == stage_bytes);
    CHECK(stats.bytes_copied < file_bytes);
    stage_bytes_total += stats.bytes_copied;
  }
  CheckFlatPieces(dir, *whole, checkpoint_vocab, dtype);
  const uint64_t embedding = index.at(whole->WordEmbeddingName()).end - index.at(whole->WordEmbeddingName()).begin;
  const bool tied = config.arch == ModelArch::kGpt2 || config.tie_embeddings;
  CHECK(stage_bytes_total == file_bytes + (tied ? embedding : 0));
  RemoveDir(dir);
}

TEST_CASE("with tensor parallelism 2 each rank copies its slices of the mapped checkpoint, with "
          "pipeline parallelism 2 its stage's tensors, and holds the whole model's part bitwise") {
  // gpt2: fp32 with a vocabulary padded from 90 to 96 rows (c_attn's fused q/k/v, Conv1D [in,
  // out] column pieces); llama: bf16 (converted to fp32) with GQA, untied; qwen2: tied, biases.
  CheckRanksReadTheirPart(Gpt2Config(), 90, torch::kFloat, "gpt2");
  CheckRanksReadTheirPart(LlamaConfig(/*qwen2=*/false), 96, torch::kBFloat16, "llama");
  CheckRanksReadTheirPart(LlamaConfig(/*qwen2=*/true), 96, torch::kFloat16, "qwen2");
}

TEST_CASE("LoadPretrained names a missing tensor and another shape") {
  const fs::path dir = fs::temp_directory_path() / ("accel_pretrained_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SafetensorsFile file;
  file.tensors.push_back(TensorToSafetensors("transformer.wte.weight", torch::zeros({96, 8})).value());
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  std::shared_ptr<CausalLm> model = BuildCausalLm(Gpt2Config(), 1).value();
  CHECK(LoadPretrained(*model, dir.string()).message() ==
        dir.string() + ": tensor transformer.wte.weight has shape [96, 8], the model has [96, 32]");
  file.tensors[0] = TensorToSafetensors("transformer.wte.weight", torch::zeros({96, 32})).value();
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  CHECK(LoadPretrained(*model, dir.string()).message() ==
        dir.string() + ": the checkpoint has no tensor transformer.wpe.weight");
  RemoveDir(dir);
}

}  // namespace
}  // namespace accel::exec
