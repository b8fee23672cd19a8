#include "executor/models/moe/moe_layer.h"

#include <torch/torch.h>

#include <cmath>

#include "executor/communicator.h"
#include "executor/models/moe/grouped_experts.h"
#include "executor/models/ops/linear.h"
#include "executor/models/ops/swiglu.h"

namespace accel::exec {
namespace {

at::Tensor Project(const at::Tensor& x, const at::Tensor& weight) {
  return Linear(x, weight, at::Tensor(), WeightLayout::kOutIn);
}

// A bias-free linear layer's weight, registered as `name`.weight under parent (zeros: the
// model's initializer fills every parameter).
at::Tensor Weight(torch::nn::Module& parent, const std::string& name, at::IntArrayRef shape) {
  auto module = parent.register_module(name, std::make_shared<torch::nn::Module>());
  return module->register_parameter("weight", torch::zeros(shape));
}

}  // namespace

MoeLayer::MoeLayer(const ModelConfig& config, ExpertParallel ep, int64_t tp_size) : moe_(config.moe), ep_(ep) {
  const int64_t h = config.hidden_size, num_experts = moe_.num_experts;
  TORCH_CHECK(num_experts > 0, "MoeLayer needs model.moe.num_experts > 0");
  TORCH_CHECK(tp_size >= 1 && moe_.expert_ffn_size % tp_size == 0 && moe_.shared_expert_ffn_size % tp_size == 0,
              "MoE: tensor-parallel degree ", tp_size, " does not divide the expert widths ",
              moe_.expert_ffn_size, " and ", moe_.shared_expert_ffn_size);
  const int64_t fe = moe_.expert_ffn_size / tp_size;
  TORCH_CHECK(ep_.group == nullptr || num_experts % ep_.group->Size() == 0, "MoE: expert-parallel degree ",
              ep_.group == nullptr ? 1 : ep_.group->Size(), " does not divide ", num_experts, " experts");
  local_ = ep_.LocalExperts(num_experts);
  const int64_t local = local_.second - local_.first;
  router_ = Weight(*this, "gate", {num_experts, h});
  auto experts = register_module("experts", std::make_shared<torch::nn::Module>());
  gate_ = experts->register_parameter("gate_proj", torch::zeros({local, fe, h}));
  up_ = experts->register_parameter("up_proj", torch::zeros({local, fe, h}));
  down_ = experts->register_parameter("down_proj", torch::zeros({local, h, fe}));
  if (const int64_t fs = moe_.shared_expert_ffn_size / tp_size; fs > 0) {
    auto shared = register_module("shared_expert", std::make_shared<torch::nn::Module>());
    shared_gate_proj_ = Weight(*shared, "gate_proj", {fs, h});
    shared_up_proj_ = Weight(*shared, "up_proj", {fs, h});
    shared_down_proj_ = Weight(*shared, "down_proj", {h, fs});
    if (moe_.shared_expert_gate) shared_gate_ = Weight(*this, "shared_expert_gate", {1, h});
  }
}

int64_t MoeLayer::Capacity(int64_t tokens) const {
  if (moe_.capacity_factor <= 0) return 0;
  const double even_share = static_cast<double>(tokens * moe_.top_k) / static_cast<double>(moe_.num_experts);
  return static_cast<int64_t>(std::ceil(moe_.capacity_factor * even_share));
}

at::Tensor MoeLayer::SharedExpert(const at::Tensor& x) const {
  at::Tensor y = Project(SwiGlu(Project(x, shared_gate_proj_), Project(x, shared_up_proj_)), shared_down_proj_);
  if (shared_gate_.defined()) y = y * at::sigmoid(Project(x, shared_gate_));
  return y;
}

MoeOutput MoeLayer::Forward(const at::Tensor& x) {
  const int64_t h = x.size(-1);
  const at::Tensor tokens = x.reshape({-1, h});
  const Routing routing = Route(Project(tokens, router_),
                                {moe_.top_k, moe_.sigmoid_scoring ? RouterScoring::kSigmoid : RouterScoring::kSoftmax,
                                 moe_.normalize_top_k});
  const TokenDispatch dispatch(routing.experts, routing.counts, ep_, Capacity(tokens.size(0)));
  const at::Tensor expert_out = GroupedExperts(dispatch.Dispatch(tokens), gate_, up_, down_, dispatch.RowsPerExpert());
  const at::Tensor by_slot = dispatch.Combine(expert_out);  // [T, k, h]
  at::Tensor y = (by_slot * routing.probabilities.unsqueeze(-1).to(by_slot.scalar_type())).sum(1);
  if (shared_gate_proj_.defined()) y = y + SharedExpert(tokens);
  return {y.view(x.sizes()), LoadBalancingLoss(routing), routing.counts};
}

}  // namespace accel::exec
