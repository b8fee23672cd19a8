// Stage 3: parameters held only as owned ranges and gathered unit by unit around their use
// (ZeRO-3, Rajbhandari et al. 2020 §5.3; FSDP FULL_SHARD, Zhao et al. 2023). Gradients as stage 2.
#include <torch/torch.h>

#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "executor/train/zero_sync.h"

namespace accel::exec {
namespace {

class ParamShardSync final : public GradShardSync, public UnitHooks {
 public:
  using GradShardSync::GradShardSync;

  absl::Status Init() override;
  UnitHooks* unit_hooks() override { return this; }
  absl::Status GatherAll() override;
  absl::Status EndMicroStep() override;

  void BeforeForward(int unit) override;
  at::Tensor AfterForward(int unit, const at::Tensor& output) override;

 protected:
  at::Tensor MakeOptimizerTensor(int p) override;
  absl::Status Publish() override;
  void OnGradCopied(int p) override;

 private:
  struct UnitState {
    bool gathered = false;
    bool launched = false;                  // its all-gathers are in flight (or done, unread)
    // Per UnitLayout::gathers: the buffer each all-gather fills and its work (null once waited).
    std::vector<at::Tensor> pending_outputs;
    std::vector<std::unique_ptr<PendingWork>> pending;
    int64_t grads_outstanding = 0;          // parameters whose gradient this backward awaits
  };

  int UnitIndex(int hook_unit) const;
  bool KeptAfterForward(int u) const;
  absl::Status Launch(int u);
  absl::Status EnsureGathered(int u);
  absl::Status Prefetch(int from, int step);
  void Free(int u);
  void Check(const absl::Status& status) const;

  std::vector<UnitState> units_;
  std::vector<std::vector<int64_t>> shapes_;  // every parameter's whole shape
  // Hook numbering (0 embeddings, 1+i block i, L+1 head) → this stage's unit, −1 where another
  // pipeline stage holds the unit.
  std::vector<int> unit_of_hook_;
  int embeddings_unit_ = -1;  // −1: not on this stage
  int head_unit_ = -1;
  std::recursive_mutex unit_mu_;
};

at::Tensor ParamShardSync::MakeOptimizerTensor(int p) {
  return OwnedOptimizerTensor(OwnedView(p), /*stays_whole=*/layout_.params[p].persistent,
                              options_.offload_optimizer);
}

absl::Status ParamShardSync::Init() {
  if (absl::Status s = GradShardSync::Init(); !s.ok()) return s;
  units_ = std::vector<UnitState>(layout_.units.size());
  for (size_t u = 0; u < units_.size(); ++u) {
    units_[u].grads_outstanding = static_cast<int64_t>(layout_.units[u].params.size());
  }
  for (const at::Tensor& p : params_) shapes_.emplace_back(p.sizes().begin(), p.sizes().end());
  // A stage holds consecutive blocks, and the head only with the model's last block.
  int last_layer = -1;
  std::map<int, int> layers;
  for (size_t u = 0; u < layout_.units.size(); ++u) {
    const std::string& name = layout_.units[u].name;
    int layer = -1;
    if (name == "embeddings") {
      embeddings_unit_ = static_cast<int>(u);
    } else if (name == "head") {
      head_unit_ = static_cast<int>(u);
    } else if (absl::StartsWith(name, "layers.") && absl::SimpleAtoi(name.substr(7), &layer) && layer >= 0) {
      layers[layer] = static_cast<int>(u);
      last_layer = std::max(last_layer, layer);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("sharding stage 3: unknown shard unit ", name));
    }
  }
  unit_of_hook_.assign(static_cast<size_t>(last_layer) + 3, -1);
  unit_of_hook_[0] = embeddings_unit_;
  for (const auto& [layer, u] : layers) unit_of_hook_[static_cast<size_t>(layer) + 1] = u;
  unit_of_hook_.back() = head_unit_;
  // Every rank built the whole model; from here on only the owned ranges exist.
  for (size_t u = 0; u < units_.size(); ++u) {
    units_[u].gathered = true;
    Free(static_cast<int>(u));
  }
  return absl::OkStatus();
}

int ParamShardSync::UnitIndex(int hook_unit) const {
  TORCH_CHECK(hook_unit >= 0 && hook_unit < static_cast<int>(unit_of_hook_.size()) &&
                  unit_of_hook_[hook_unit] >= 0,
              "model unit ", hook_unit, " is not in the plan's shard units of this stage");
  return unit_of_hook_[hook_unit];
}

// The head is needed again at once by backward (torchtitan does not reshard it either); a tied
// embedding is read again by the head.
bool ParamShardSync::KeptAfterForward(int u) const {
  return u == head_unit_ || (options_.tied_embeddings && u == embeddings_unit_);
}

void ParamShardSync::Check(const absl::Status& status) const {
  TORCH_CHECK(status.ok(), std::string(status.message()));
}

absl::Status ParamShardSync::Launch(int u) {
  const UnitLayout& unit = layout_.units[u];
  UnitState& state = units_[u];
  state.pending_outputs.assign(unit.gathers.size(), at::Tensor());
  state.pending.clear();
  state.pending.resize(unit.gathers.size());
  state.launched = true;
  ++stats_.unit_gathers;
  for (size_t g = 0; g < unit.gathers.size(); ++g) {
    ACCEL_ASSIGN_OR_RETURN(state.pending[g], LaunchGather(unit.gathers[g], state.pending_outputs[g]));
  }
  return absl::OkStatus();
}

absl::Status ParamShardSync::EnsureGathered(int u) {
  UnitState& state = units_[u];
  if (state.gathered) return absl::OkStatus();
  if (!state.launched) ACCEL_RETURN_IF_ERROR(Launch(u));
  for (std::unique_ptr<PendingWork>& work : state.pending) {
    if (!work) continue;
    absl::Status s = work->Wait();
    work.reset();
    if (!s.ok()) return s;
  }
  torch::NoGradGuard no_grad;
  const UnitLayout& unit = layout_.units[u];
  for (size_t g = 0; g < unit.gathers.size(); ++g) {
    for (int p : unit.gathers[g].params) {
      if (layout_.params[p].persistent) continue;
      at::Tensor full = at::empty({layout_.params[p].numel}, params_[p].options());
      full.copy_(GatheredWhole(unit.gathers[g], state.pending_outputs[g], p));
      params_[p].set_data(full.view(shapes_[p]));
    }
  }
  state.pending_outputs.clear();
  state.launched = false;
  state.gathered = true;
  return absl::OkStatus();
}

void ParamShardSync::Free(int u) {
  UnitState& state = units_[u];
  if (!state.gathered) return;
  for (int p : layout_.units[u].params) {
    if (!layout_.params[p].persistent) params_[p].set_data(at::empty({0}, params_[p].options()));
  }
  state.gathered = false;
}

absl::Status ParamShardSync::Prefetch(int from, int step) {
  int64_t budget = layout_.prefetch_elements;
  bool launched = false;
  for (int h = from; h >= 0 && h < static_cast<int>(unit_of_hook_.size()); h += step) {
    const int u = unit_of_hook_[h];
    if (u < 0) continue;
    UnitState& state = units_[u];
    if (state.gathered || state.launched) continue;
    const int64_t numel = layout_.units[u].numel;
    if (launched && numel > budget) break;
    if (absl::Status s = Launch(u); !s.ok()) return s;
    budget -= numel;
    launched = true;
  }
  return absl::OkStatus();
}

void ParamShardSync::BeforeForward(int hook_unit) {
  std::lock_guard<std::recursive_mutex> lock(unit_mu_);
  const int u = UnitIndex(hook_unit);
  Check(EnsureGathered(u));
  Check(Prefetch(hook_unit + 1, +1));
}

at::Tensor ParamShardSync::AfterForward(int hook_unit, const at::Tensor& output) {
  std::lock_guard<std::recursive_mutex> lock(unit_mu_);
  const int u = UnitIndex(hook_unit);
  if (!KeptAfterForward(u)) Free(u);
  if (!output.requires_grad()) return output;
  // Before this unit's backward: gather it again and prefetch the units before it.
  at::Tensor out = output;
  out.register_hook([this, u, hook_unit](const at::Tensor&) {
    std::lock_guard<std::recursive_mutex> hook_lock(unit_mu_);
    Check(EnsureGathered(u));
    Check(Prefetch(hook_unit - 1, -1));
  });
  return out;
}

void ParamShardSync::OnGradCopied(int p) {
  std::lock_guard<std::recursive_mutex> lock(unit_mu_);
  // A unit's backward is over once every one of its parameters has its gradient.
  UnitState& state = units_[layout_.params[p].unit];
  if (--state.grads_outstanding == 0) Free(layout_.params[p].unit);
}

absl::Status ParamShardSync::EndMicroStep() {
  absl::Status status = GradShardSync::EndMicroStep();
  std::lock_guard<std::recursive_mutex> lock(unit_mu_);
  for (size_t u = 0; u < units_.size(); ++u) {
    UnitState& state = units_[u];
    for (std::unique_ptr<PendingWork>& work : state.pending) {
      if (!work) continue;
      absl::Status s = work->Wait();
      if (status.ok()) status = s;
      work.reset();
    }
    state.pending_outputs.clear();
    state.launched = false;
    state.grads_outstanding = static_cast<int64_t>(layout_.units[u].params.size());
    Free(static_cast<int>(u));
  }
  return status;
}

absl::Status ParamShardSync::GatherAll() {
  std::lock_guard<std::recursive_mutex> lock(unit_mu_);
  try {
    for (size_t u = 0; u < units_.size(); ++u) {
      if (absl::Status s = EnsureGathered(static_cast<int>(u)); !s.ok()) return s;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("gathering parameters failed: ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status ParamShardSync::Publish() {
  // Units gathered for sampling hold the old values: drop them; the next use gathers anew.
  for (size_t u = 0; u < units_.size(); ++u) Free(static_cast<int>(u));
  return AllGatherUnits([](const ParamSlot& slot) { return slot.persistent; });
}

}  // namespace

std::unique_ptr<BucketedGradSync> MakeParamShardSync(std::vector<at::Tensor> params,
                                                     ShardLayout layout, DataParallelGroups groups,
                                                     GradSyncOptions options) {
  return std::make_unique<ParamShardSync>(std::move(params), std::move(layout), std::move(groups),
                                          options);
}

}  // namespace accel::exec
