#include "executor/calibrate/elementwise_costs.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include "executor/blas_threads.h"
#include "executor/calibrate/timing.h"
#include "executor/models/llama.h"
#include "executor/models/ops/gelu.h"
#include "executor/models/ops/layer_norm.h"
#include "executor/models/ops/rotary.h"
#include "executor/models/ops/swiglu.h"
#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

using calibrate::Clock;
using calibrate::Median;
using calibrate::Seconds;

// An op: builds its output from fresh leaf inputs (the timed forward); backward is timed on it.
using OpForward = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// A leaf input of an op. The residual stream stays fp32 under autocast (fp32 embeddings plus
// 16-bit block outputs promote), so the norms and the residual add read it in fp32, and so does
// GPT-2's GELU: Conv1D adds its fp32 bias to the 16-bit product, which promotes. Other matmul
// outputs are in the compute dtype. (With 16-bit parameters these would be 16-bit too; the
// costs describe the usual fp32 parameters under autocast.)
struct Input {
  std::vector<int64_t> shape;
  bool fp32 = false;
};

struct Op {
  const char* name;
  std::vector<Input> inputs;
  double elements;  // what one element is for this op, planner/elementwise_ops.h
  OpForward forward;
};

ElementwiseOpCost Time(const Op& op, at::ScalarType type, ComputePrecision precision,
                                 const std::string& dtype) {
  std::vector<double> forward, backward;
  for (int run = 0; run < 6; ++run) {
    std::vector<torch::Tensor> inputs;
    for (const Input& input : op.inputs) {
      const at::ScalarType input_type = input.fp32 ? at::kFloat : type;
      inputs.push_back(torch::randn(input.shape).to(input_type).requires_grad_(true));
    }
    torch::Tensor out;
    Clock::time_point start = Clock::now();
    {
      AutocastScope autocast(c10::DeviceType::CPU, precision);
      out = op.forward(inputs);
    }
    const double f = Seconds(start);
    torch::Tensor grad = torch::ones_like(out);
    start = Clock::now();
    out.backward(grad);
    const double b = Seconds(start);
    if (run == 0) continue;  // warm-up
    forward.push_back(f);
    backward.push_back(b);
  }
  return {op.name, dtype, Median(forward) / op.elements, Median(backward) / op.elements};
}

std::vector<Op> Ops() {
  const int64_t rows = 4096, width = 256;
  auto norm_weight = std::make_shared<torch::Tensor>(torch::ones({width}).requires_grad_(true));
  auto norm_bias = std::make_shared<torch::Tensor>(torch::zeros({width}).requires_grad_(true));
  auto rms = std::make_shared<RmsNormModule>(width, 1e-5);
  // Conv1D's bias, an fp32 parameter that Conv1D adds in the product's dtype (executor/models/gpt2.h).
  auto bias = std::make_shared<torch::Tensor>(torch::zeros({width}).requires_grad_(true));
  // Rotary tables for 512 positions of head_dim 32, in fp32 as LlamaModel casts them to an fp32
  // stage input (fp32 parameters).
  const int64_t positions = 512, head_dim = 32;
  torch::Tensor freqs = torch::outer(torch::arange(positions, torch::kFloat),
                                     torch::ones({head_dim / 2}) * 1e-2);
  const torch::Tensor cos = torch::cat({freqs, freqs}, -1).cos();
  const torch::Tensor sin = torch::cat({freqs, freqs}, -1).sin();
  const Input stream{{rows, width}, true};  // fp32 under autocast (above)
  const Input matmul_output{{rows, width}, false};
  const double n = static_cast<double>(rows * width);
  return {
      {"layer_norm", {stream}, n,
       [=](const std::vector<torch::Tensor>& x) {
         return LayerNorm(x[0], *norm_weight, *norm_bias, 1e-5);
       }},
      {"rms_norm", {stream}, n,
       [=](const std::vector<torch::Tensor>& x) { return rms->Forward(x[0]); }},
      {"gelu_tanh", {matmul_output}, n,
       [](const std::vector<torch::Tensor>& x) { return Gelu(x[0]); }},
      {"silu_mul", {matmul_output, matmul_output}, n,
       [](const std::vector<torch::Tensor>& x) { return SwiGlu(x[0], x[1]); }},
      // As executor/models/causal_lm.cc's unfused CausalAttention between its two products.
      {"causal_softmax", {{{16, 256, 256}}}, 16.0 * 256 * 256,
       [](const std::vector<torch::Tensor>& x) {
         const int64_t t = x[0].size(-1);
         torch::Tensor future =
             torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool)).triu(1);
         torch::Tensor scores = (x[0] * 0.125).masked_fill(
             future, -std::numeric_limits<double>::infinity());
         return torch::softmax(scores, -1);
       }},
      // The softmax part of the chunked loss (executor/models/ops/chunked_cross_entropy.h), on
      // the whole rows at once.
      {"cross_entropy", {{{1024, 1024}}}, 1024.0 * 1024,
       [](const std::vector<torch::Tensor>& x) {
         torch::Tensor targets = torch::randint(0, x[0].size(1), {x[0].size(0)}, torch::kLong);
         return torch::nn::functional::cross_entropy(x[0].to(torch::kFloat), targets);
       }},
      // LlamaBlock's queries (or keys): [batch 8, heads 8, seq, head_dim], 2^20 values.
      {"rotary", {{{8, 8, positions, head_dim}}}, 8.0 * 8 * positions * head_dim,
       [=](const std::vector<torch::Tensor>& x) { return ApplyRotary(x[0], cos, sin); }},
      {"residual_add", {stream, matmul_output}, n,
       [](const std::vector<torch::Tensor>& x) { return x[0] + x[1]; }},
      {"bias_add", {matmul_output}, n,
       [=](const std::vector<torch::Tensor>& x) { return x[0] + bias->to(x[0].scalar_type()); }},
  };
}

}  // namespace

absl::StatusOr<std::vector<ElementwiseOpCost>> MeasureElementwiseCosts(
    const std::string& dtype) {
  if (dtype != "fp32" && dtype != "bf16") {
    return absl::InvalidArgumentError("elementwise costs are measured for fp32 and bf16, not '" +
                                      dtype + "'");
  }
  const bool bf16 = dtype == "bf16";
  at::set_num_threads(1);
  SetBlasThreads(1);
  std::vector<ElementwiseOpCost> costs;
  try {
    for (const Op& op : Ops()) {
      costs.push_back(Time(op, bf16 ? at::kBFloat16 : at::kFloat,
                           bf16 ? ComputePrecision::kBf16 : ComputePrecision::kFp32, dtype));
    }
  } catch (const c10::Error& e) {
    return absl::UnimplementedError("cannot time " + dtype + " elementwise ops on the CPU: " +
                                    e.what_without_backtrace());
  } catch (const std::exception& e) {
    return absl::UnimplementedError("cannot time " + dtype + " elementwise ops on the CPU: " +
                                    std::string(e.what()));
  }
  return costs;
}

}  // namespace accel::exec
