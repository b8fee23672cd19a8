// Activation recompute (gradient checkpointing) for LibTorch C++, which has no
// torch.utils.checkpoint: a region's forward keeps only its inputs, and backward re-runs the region
// with autograd on to rebuild the activations it needs (Chen et al. 2016, "Training Deep Nets with
// Sublinear Memory Cost"). This is the reentrant variant, PyTorch's CheckpointFunction in
// torch/utils/checkpoint.py: a custom autograd Function whose backward recomputes and then calls
// backward on the recomputed graph.
//
// "Full" recompute wraps a whole transformer block; "selective" recompute (Korthikanti et al.
// 2022, "Reducing Activation Recomputation in Large Transformer Models") wraps only the attention
// core softmax(q k^T / sqrt(d)) v, whose activations are large and cheap to recompute. Per-op
// recompute wraps a whole block whose kept ops store their outputs with the region
// (executor/train/kept_outputs.h, executor/train/region_outputs.h).
//
// Limits, as in PyTorch's reentrant variant:
// - Gradients flow through backward() only: torch::autograd::grad (or backward with `inputs`)
//   through a recomputed region is refused with a c10::Error from backward. Parameters used
//   inside fn get their gradients accumulated into .grad (their hooks fire) during the recompute.
// - fn must be deterministic given the inputs, the RNG state and the autocast state (all three are
//   restored for the recompute), must not depend on other mutable state (e.g. a module's training
//   flag changing between forward and backward), and must not modify its inputs in place.
// - Each backward through a region recomputes it: backward with retain_graph can run again.
// - The CPU RNG is shared by all threads: threads drawing random numbers while another thread
//   recomputes see the forked state (fork and restore are not atomic across threads).
#ifndef ACCEL_EXECUTOR_TRAIN_RECOMPUTE_H_
#define ACCEL_EXECUTOR_TRAIN_RECOMPUTE_H_

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace accel::exec {

// A region with one input and one output, e.g. a transformer block: hidden [batch, seq, hidden]
// to hidden [batch, seq, hidden].
using RecomputeFn = std::function<torch::Tensor(const torch::Tensor&)>;

// A region with several inputs and outputs, e.g. the attention core: {q, k, v}, each
// [batch, heads, seq, head_dim], to {context [batch, heads, seq, head_dim]}.
using RecomputeManyFn =
    std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>&)>;

// Returns fn(input) and, when grad mode is on, records one autograd node that saves only `input`
// (and the CPU RNG state, the RNG state of input's device if not CPU, and the autocast state):
// fn runs under torch::NoGradGuard, so its intermediate activations are freed as fn returns.
// Backward re-runs fn on a detached alias of the input with grad mode on, under the saved RNG
// state (dropout draws the same mask; the outer RNG stream is restored afterwards; skipped when
// preserve_rng_state is false) and the saved autocast state, then backpropagates the incoming
// gradient through the recomputed graph. The input's gradient is taken as autograd delivers it,
// not from a leaf's .grad (PyTorch's way, which copies it into the input's layout), so gradients
// are bitwise equal to running fn without Recompute.
// With grad mode off it just returns fn(input). If no input requires grad, the first
// floating-point one is replaced by a detached alias that does, so parameters inside fn still get
// gradients; if no input is floating point, fn runs without checkpointing.
// Nesting (Recompute inside fn) works: the inner region runs plainly in the outer forward and
// is checkpointed during the outer recompute.
// Errors (c10::Error): input undefined; in backward, torch::autograd::grad through the region,
// a recompute returning a different number of outputs, or no recomputed output requiring grad.
// Memory: saves input (shared with the caller, usually kept anyway) plus the RNG state (5056
// bytes for the CPU generator); recompute costs one extra forward of fn per backward.
torch::Tensor Recompute(const RecomputeFn& fn, const torch::Tensor& input,
                        bool preserve_rng_state = true);

// Recompute for several inputs and outputs (same contract). Every input must be defined; outputs
// may be any tensors (those that do not require grad in the recompute get no gradient).
std::vector<torch::Tensor> RecomputeMany(const RecomputeManyFn& fn,
                                         const std::vector<torch::Tensor>& inputs,
                                         bool preserve_rng_state = true);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_RECOMPUTE_H_
