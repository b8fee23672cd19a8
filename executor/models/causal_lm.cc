#include "executor/models/causal_lm.h"

#include <torch/torch.h>

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/models/gpt2.h"
#include "executor/models/llama.h"
#include "executor/train/recompute.h"

namespace accel::exec {

torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const int64_t t = q.size(-2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  torch::Tensor future = torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(q.device()))
                             .triu(/*diagonal=*/1);
  scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v);
}

torch::Tensor AttentionCore(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            bool recompute) {
  if (!recompute) return CausalAttention(q, k, v);
  auto core = [](const std::vector<torch::Tensor>& in) {
    return std::vector<torch::Tensor>{CausalAttention(in[0], in[1], in[2])};
  };
  return RecomputeMany(core, {q, k, v}).front();
}

absl::Status CausalLm::SetRecomputeModules(const std::vector<std::string>& modules) {
  const size_t layers = static_cast<size_t>(config_.num_layers);
  std::map<std::string, std::pair<size_t, bool>> known;  // path -> (layer, is attention core)
  for (size_t l = 0; l < layers; ++l) {
    known[BlockPath(static_cast<int64_t>(l))] = {l, false};
    known[BlockPath(static_cast<int64_t>(l)) + AttentionCoreSuffix()] = {l, true};
  }
  std::vector<bool> blocks(layers, false), cores(layers, false);
  for (const std::string& module : modules) {
    auto it = known.find(module);
    if (it == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "recompute module ", module, " is not a block or attention core of this ",
          ModelArchName(config_.arch), " model (blocks ", BlockPath(0), " … ",
          BlockPath(config_.num_layers - 1), ")"));
    }
    (it->second.second ? cores : blocks)[it->second.first] = true;
  }
  recompute_block_ = std::move(blocks);
  recompute_core_ = std::move(cores);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<CausalLm>> BuildCausalLm(const ModelConfig& config, uint64_t seed) {
  if (absl::Status s = ValidateModelConfig(config); !s.ok()) return s;
  std::shared_ptr<CausalLm> model;
  try {
    if (config.arch == ModelArch::kGpt2) {
      model = std::make_shared<Gpt2Model>(config);
    } else {
      model = std::make_shared<LlamaModel>(config);
    }
    torch::NoGradGuard no_grad;
    at::Generator gen = at::detail::createCPUGenerator(seed);
    const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.num_layers));
    for (auto& item : model->named_parameters()) {
      const std::string& name = item.key();
      torch::Tensor& p = item.value();
      const bool is_norm = absl::StrContains(name, "ln_") || absl::StrContains(name, "layernorm") ||
                           absl::StrContains(name, ".norm.");
      if (is_norm) {
        p.fill_(absl::EndsWith(name, ".bias") ? 0.0 : 1.0);
      } else if (absl::EndsWith(name, ".bias")) {
        p.zero_();
      } else if (config.arch == ModelArch::kGpt2 && absl::EndsWith(name, "c_proj.weight")) {
        p.normal_(0.0, proj_std, gen);
      } else {
        p.normal_(0.0, 0.02, gen);
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("building ", ModelArchName(config.arch), " failed: ", e.what()));
  }
  return model;
}

}  // namespace accel::exec
