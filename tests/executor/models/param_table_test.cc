// The planner's parameter table (planner/model_params.h BuildModelParams, which sizes memory,
// shard units and buckets) against the parameters the executor's models really have: same
// Hugging Face names in the same order, same shapes, same counts. Each family starts from its real
// Hugging Face config.json (tests/testdata/corpus) with the dimensions shrunk, so its structural
// flags stay as shipped: gpt2 tied with learned positions, Llama-3 and Mistral untied with
// grouped-query attention, Qwen2 with q/k/v biases and a tied head.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../plan_from_yaml.h"
#include "executor/models/causal_lm.h"
#include "executor/models/model_config.h"
#include "planner/model_params.h"

namespace accel::exec {
namespace {

ir::Plan PlanFrom(const std::string& config_json, const std::string& dims) {
  const std::string yaml = R"(version: 1
name: param-table
model: {config: )" + std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + config_json +
                           ", " + dims + R"(}
data:
  train: {path: /dev/null, format: tokens, dtype: uint16}
  seq_len: 16
  micro_batch_size: 1
training: {steps: 1}
cluster: {nodes: 1, devices_per_node: 1, device: cpu, device_memory: 1GiB}
)";
  return testing::PlanFromYaml(yaml);
}

struct Family {
  const char* name;
  const char* config;
  const char* dims;
  bool tied;
  bool qkv_bias;
};

TEST_CASE("the planner's parameter table is the executor model's named_parameters()") {
  const Family families[] = {
      {"gpt2", "gpt2/config.json", "hidden_size: 64, num_layers: 2, num_heads: 4, vocab_size: 256, max_seq_len: 32",
       true, false},
      {"llama-3", "Llama-3.1-8B-Instruct/config.json",
       "hidden_size: 64, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 96, vocab_size: 256, max_seq_len: 32",
       false, false},
      {"mistral", "Mistral-7B-Instruct-v0.1/config.json",
       "hidden_size: 64, num_layers: 3, num_heads: 8, num_kv_heads: 2, ffn_hidden_size: 80, vocab_size: 300, max_seq_len: 32",
       false, false},
      {"qwen2", "Qwen2-0.5B-Instruct/config.json",
       "hidden_size: 64, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 96, vocab_size: 256, max_seq_len: 32",
       true, true},
  };
  for (const Family& f : families) {
    INFO(f.name);
    const ir::Plan plan = PlanFrom(f.config, f.dims);
    CHECK(plan.model().tie_word_embeddings() == f.tied);
    CHECK(plan.model().qkv_bias() == f.qkv_bias);
    absl::StatusOr<ModelConfig> config = ModelConfigFromPlan(plan.model());
    REQUIRE(config.ok());
    std::shared_ptr<CausalLm> model = *BuildCausalLm(*config, 1);
    const planner::ModelParams table = planner::BuildModelParams(plan.model(), 1);
    std::vector<planner::ParamInfo> rows = table.embedding;
    for (const auto& layer : table.layers) rows.insert(rows.end(), layer.begin(), layer.end());
    rows.insert(rows.end(), table.head.begin(), table.head.end());
    auto named = model->named_parameters();
    REQUIRE(named.size() == rows.size());
    int64_t local_total = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const planner::ParamInfo& row = rows[i];
      INFO(row.name);
      CHECK(named[i].key() == row.name);
      // Vocabulary tensors hold the padded rows (padded_vocab_size), as the table's local_count.
      std::vector<int64_t> shape = row.shape;
      if (row.tp_dim == 0 && row.local_count != row.count) shape[0] = row.local_count / shape[1];
      CHECK(named[i].value().sizes().vec() == shape);
      CHECK(named[i].value().numel() == row.local_count);
      local_total += row.local_count;
    }
    // Closed form: the table's exact counts (unpadded) are the planner's.
    CHECK(table.counts.total_count() == planner::CountParameters(plan.model()).total_count());
    CHECK(local_total >= table.counts.total_count());
  }
}

}  // namespace
}  // namespace accel::exec
