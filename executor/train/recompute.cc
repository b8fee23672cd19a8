#include "executor/train/recompute.h"

#include <ATen/Context.h>
#include <torch/csrc/autograd/engine.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "executor/train/autocast.h"
#include "executor/train/region_outputs.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Generator states of the devices a region draws random numbers from.
struct RngStates {
  std::vector<at::Device> devices;
  std::vector<at::Tensor> states;
};

at::Tensor GetRngState(const at::Device& device) {
  at::Generator gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void SetRngState(const at::Device& device, const at::Tensor& state) {
  at::Generator gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

// The CPU generator always (CPU ops inside fn may draw), plus the device of each non-CPU input,
// as torch/utils/checkpoint.py's get_device_states does for CUDA inputs.
RngStates CaptureRng(const variable_list& inputs) {
  RngStates rng;
  rng.devices.emplace_back(at::kCPU);
  for (const auto& t : inputs) {
    const at::Device device = t.device();
    if (std::find(rng.devices.begin(), rng.devices.end(), device) == rng.devices.end()) {
      rng.devices.push_back(device);
    }
  }
  for (const auto& device : rng.devices) rng.states.push_back(GetRngState(device));
  return rng;
}

// Sets the given states for the scope and restores the states found on entry on exit, so the
// outer random stream is the same as if the recompute had not happened (torch.random.fork_rng).
class RngFork {
 public:
  explicit RngFork(const RngStates& saved) {
    outer_.devices = saved.devices;
    for (size_t i = 0; i < saved.devices.size(); ++i) {
      outer_.states.push_back(GetRngState(saved.devices[i]));
      SetRngState(saved.devices[i], saved.states[i]);
    }
  }
  ~RngFork() {
    for (size_t i = 0; i < outer_.devices.size(); ++i) {
      SetRngState(outer_.devices[i], outer_.states[i]);
    }
  }
  RngFork(const RngFork&) = delete;
  RngFork& operator=(const RngFork&) = delete;

 private:
  RngStates outer_;
};

// What backward needs besides the saved inputs. Held in AutogradContext::saved_data as a capsule:
// IValue has no slot for a std::function, and a capsule needs no class registration.
struct RegionState : torch::CustomClassHolder {
  RecomputeManyFn fn;
  bool preserve_rng_state = true;
  RngStates rng;
  AutocastState autocast;
  RegionOutputs kept;  // per-op selective checkpointing (kept_outputs.h)
  // RecomputeFromOutputs: forward returns these instead of running fn.
  std::optional<variable_list> precomputed;
};

constexpr const char* kStateKey = "accel_recompute_state";

// The number of leading non-tensor arguments of RecomputeFunction::forward, which get an
// undefined gradient.
constexpr size_t kNonTensorArgs = 1;

// Where CaptureGrad leaves the gradient of one recompute input.
struct GradSlot : torch::CustomClassHolder {
  at::Tensor grad;
};

constexpr const char* kSlotKey = "accel_recompute_grad_slot";

// Identity whose backward stores the incoming gradient in a slot and passes nothing on. The
// recompute reads its inputs' gradients here rather than from leaves' .grad as PyTorch's
// CheckpointFunction does: AccumulateGrad copies a gradient into the leaf's layout (e.g. the
// transposed-matmul gradient of k becomes contiguous), and different strides change the summation
// order of later reductions (k's bias gradient), so results would differ in the last bits from a
// run without recompute. The raw gradient keeps them bitwise equal and saves that copy.
struct CaptureGrad : torch::autograd::Function<CaptureGrad> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input,
                            c10::intrusive_ptr<GradSlot> slot) {
    ctx->saved_data[kSlotKey] = c10::IValue::make_capsule(std::move(slot));
    // A non-differentiable alias: the output is a new autograd variable sharing input's storage.
    return input.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto slot = c10::static_intrusive_pointer_cast<GradSlot>(ctx->saved_data[kSlotKey].toCapsule());
    slot->grad = std::move(grad_outputs[0]);
    return {at::Tensor(), at::Tensor()};
  }
};

// Inputs for the recompute: detached from the forward graph; those that required grad lead to a
// CaptureGrad node whose slot receives their gradient.
variable_list DetachForRecompute(const variable_list& saved,
                                 std::vector<c10::intrusive_ptr<GradSlot>>& slots) {
  variable_list detached;
  detached.reserve(saved.size());
  for (const auto& t : saved) {
    slots.push_back(c10::make_intrusive<GradSlot>());
    if (!t.requires_grad()) {
      detached.push_back(t.detach());
      continue;
    }
    detached.push_back(CaptureGrad::apply(t.detach().requires_grad_(true), slots.back()));
  }
  return detached;
}

// Re-runs the region on the saved inputs with autograd on, under the forward's RNG and autocast
// state; slots receive the inputs' gradients once backward runs through the outputs.
// The kept ops inside it take their outputs from the forward's (kept_outputs.h).
variable_list RunRegion(RegionState& state, const variable_list& saved,
                        std::vector<c10::intrusive_ptr<GradSlot>>& slots) {
  std::optional<RngFork> fork;
  if (state.preserve_rng_state) fork.emplace(state.rng);
  AutocastStateScope autocast(state.autocast);
  torch::AutoGradMode grad_on(true);
  ActiveRegionScope replay(&state.kept, /*replay=*/true);
  variable_list outputs = state.fn(DetachForRecompute(saved, slots));
  state.kept.CheckAllTaken();
  return outputs;
}

struct RecomputeFunction : torch::autograd::Function<RecomputeFunction> {
  static variable_list forward(AutogradContext* ctx, c10::intrusive_ptr<RegionState> state,
                               at::TensorList inputs) {
    // Function::apply already runs forward with grad mode off: fn's graph is not recorded.
    variable_list input_list = inputs.vec();
    if (state->preserve_rng_state) state->rng = CaptureRng(input_list);
    state->autocast = CurrentAutocastState();
    ctx->save_for_backward(input_list);
    variable_list outputs;
    if (state->precomputed) {
      // Non-differentiable aliases, so that autograd records this node as their origin.
      for (const auto& t : *state->precomputed) outputs.push_back(t.detach());
      state->precomputed.reset();
    } else {
      ActiveRegionScope record(&state->kept, /*replay=*/false);
      outputs = state->fn(input_list);
    }
    ctx->saved_data[kStateKey] = c10::IValue::make_capsule(std::move(state));
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TORCH_CHECK(torch::autograd::Engine::get_default_engine().is_checkpoint_valid(),
                "Recompute: gradients through a recomputed region need backward(); "
                "torch::autograd::grad and backward with `inputs` are not supported");
    auto state =
        c10::static_intrusive_pointer_cast<RegionState>(ctx->saved_data[kStateKey].toCapsule());
    std::vector<c10::intrusive_ptr<GradSlot>> slots;
    variable_list outputs = RunRegion(*state, ctx->get_saved_variables(), slots);
    BackwardThrough(outputs, grad_outputs);
    variable_list grads(kNonTensorArgs);
    for (const auto& slot : slots) grads.push_back(std::move(slot->grad));
    return grads;
  }

  // Backpropagates grad_outputs through the recomputed outputs that require grad.
  static void BackwardThrough(const variable_list& outputs, const variable_list& grad_outputs) {
    TORCH_CHECK(outputs.size() == grad_outputs.size(), "Recompute: fn returned ", outputs.size(),
                " outputs on recompute but ", grad_outputs.size(), " in forward");
    variable_list with_grad;
    variable_list grads;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined() || !outputs[i].requires_grad()) continue;
      with_grad.push_back(outputs[i]);
      grads.push_back(grad_outputs[i]);
    }
    TORCH_CHECK(!with_grad.empty(),
                "Recompute: no output of the recomputed region requires grad; "
                "the region needs no checkpoint");
    torch::autograd::backward(with_grad, grads);
  }
};

// Without an input that requires grad, Function::apply records no node and parameters used inside
// fn would get no gradient: replace the first floating-point input by a detached alias that
// requires grad (its gradient is dropped). Returns false when no input can require grad.
bool MakeSomeInputRequireGrad(std::vector<torch::Tensor>& inputs) {
  for (const auto& t : inputs) {
    if (t.requires_grad()) return true;
  }
  for (auto& t : inputs) {
    if (t.is_floating_point() || t.is_complex()) {
      t = t.detach().requires_grad_(true);
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<torch::Tensor> RecomputeMany(const RecomputeManyFn& fn,
                                         const std::vector<torch::Tensor>& inputs,
                                         bool preserve_rng_state) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    TORCH_CHECK(inputs[i].defined(), "Recompute: input ", i, " is undefined");
  }
  if (!torch::GradMode::is_enabled()) return fn(inputs);
  std::vector<torch::Tensor> region_inputs = inputs;
  if (!MakeSomeInputRequireGrad(region_inputs)) return fn(inputs);
  auto state = c10::make_intrusive<RegionState>();
  state->fn = fn;
  state->preserve_rng_state = preserve_rng_state;
  return RecomputeFunction::apply(std::move(state), at::TensorList(region_inputs));
}

std::vector<at::Tensor> RecomputeFromOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs,
                                             std::vector<at::Tensor> outputs) {
  if (!torch::GradMode::is_enabled()) return outputs;
  std::vector<torch::Tensor> region_inputs = inputs;
  if (!MakeSomeInputRequireGrad(region_inputs)) return outputs;
  auto state = c10::make_intrusive<RegionState>();
  state->fn = fn;
  state->precomputed = std::move(outputs);
  return RecomputeFunction::apply(std::move(state), at::TensorList(region_inputs));
}

torch::Tensor Recompute(const RecomputeFn& fn, const torch::Tensor& input,
                        bool preserve_rng_state) {
  RecomputeManyFn many = [fn](const std::vector<torch::Tensor>& inputs) {
    return std::vector<torch::Tensor>{fn(inputs[0])};
  };
  return RecomputeMany(many, {input}, preserve_rng_state)[0];
}

namespace {

thread_local ActiveRegion active_region;

}  // namespace

std::vector<at::Tensor> RegionOutputs::Take() {
  TORCH_CHECK(next_ < outputs_.size(),
              "Recompute: the region's kept outputs were used by an earlier backward or its recompute "
              "keeps more outputs than its forward (", outputs_.size(), "); per-op recompute allows one "
              "backward per forward");
  return std::move(outputs_[next_++]);
}

void RegionOutputs::CheckAllTaken() const {
  TORCH_CHECK(next_ == outputs_.size(), "Recompute: the recompute used ", next_, " of the ", outputs_.size(),
              " outputs its forward kept; the region must run the same kept ops each time");
}

ActiveRegion CurrentRegion() { return active_region; }

ActiveRegionScope::ActiveRegionScope(RegionOutputs* outputs, bool replay) : previous_(active_region) {
  active_region = ActiveRegion{outputs, replay};
}

ActiveRegionScope::~ActiveRegionScope() { active_region = previous_; }

}  // namespace accel::exec
