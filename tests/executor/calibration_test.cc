#include "executor/calibrate/calibration.h"
#include "tests/executor/cpu_flags.h"
#include "executor/calibrate/data_parallel_step.h"
#include "executor/calibrate/elementwise_costs.h"
#include "executor/calibrate/optimizer_step.h"
#include "executor/calibrate/tensor_parallel_step.h"
#include "executor/models/causal_lm.h"
#include "executor/calibrate/worker_scaling.h"
#include "executor/models/gpt2.h"
#include "executor/train/autocast.h"
#include "planner/elementwise_ops.h"
#include "spec/device_profile_file.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <torch/torch.h>

namespace accel::exec {
namespace {

TEST_CASE("MeasureGlooAllReduce times each size between compute bursts on every rank",
          "[calibrate]") {
  const std::string store = "/tmp/accel_calibration_test." + std::to_string(::getpid());
  ::unlink(store.c_str());
  auto samples = MeasureGlooAllReduce(2, {4096, 1 << 20}, 5, 2, store);
  ::unlink(store.c_str());
  REQUIRE(samples.ok());
  REQUIRE(samples->size() == 2);
  CHECK((*samples)[0].group_size == 2);
  CHECK((*samples)[0].bytes == 4096);
  CHECK((*samples)[1].bytes == 1 << 20);
  for (const planner::CollectiveSample& s : *samples) {
    CHECK(std::isfinite(s.seconds));
    CHECK(s.seconds > 0);
    CHECK(s.seconds < 1.0);  // a 1 MiB all-reduce between two local processes, in a step
  }
}

TEST_CASE("MeasureElementwiseCosts times every op of the profile's list, in its order",
          "[calibrate]") {
  auto costs = MeasureElementwiseCosts("fp32");
  REQUIRE(costs.ok());
  REQUIRE(costs->size() == spec::kElementwiseOpNames.size());
  for (size_t i = 0; i < costs->size(); ++i) {
    const ElementwiseOpCost& c = (*costs)[i];
    CHECK(c.op == spec::kElementwiseOpNames[i]);
    // calibrate names the measured means by the planner's list: the same, in the same order.
    CHECK(c.op == planner::ElementwiseOpName(static_cast<planner::ElementwiseOp>(i)));
    CHECK(c.dtype == "fp32");
    CHECK(std::isfinite(c.forward_seconds_per_element));
    CHECK(std::isfinite(c.backward_seconds_per_element));
    CHECK(c.forward_seconds_per_element > 0);
    CHECK(c.backward_seconds_per_element > 0);
    // About 2^20 elements per op: a nanosecond to a microsecond each on any CPU.
    CHECK(c.forward_seconds_per_element < 1e-6);
  }
  auto fp16 = MeasureElementwiseCosts("fp16");
  REQUIRE_FALSE(fp16.ok());
  CHECK(fp16.status().message() == "elementwise costs are measured for fp32 and bf16, not 'fp16'");
}

// MeasureElementwiseCosts times the norms and the residual add on fp32 inputs and the other ops
// (GPT-2's GELU included) on bf16 ones under bf16 autocast; this is why, for fp32 parameters.
TEST_CASE("under bf16 autocast the residual stream stays fp32, Conv1D's and nn::Linear's outputs are bf16",
          "[calibrate]") {
  Conv1D conv(8, 16);
  torch::nn::Linear linear(torch::nn::LinearOptions(8, 16).bias(false));
  const torch::Tensor x = torch::randn({4, 8});
  AutocastScope autocast(c10::DeviceType::CPU, ComputePrecision::kBf16);
  CHECK(conv.Project(x).scalar_type() == at::kBFloat16);
  CHECK(conv.Forward(x).scalar_type() == at::kBFloat16);  // GELU's input: the bias is added in bf16
  const torch::Tensor product = linear->forward(x);
  CHECK(product.scalar_type() == at::kBFloat16);         // silu_mul's and rotary's inputs
  CHECK((torch::randn({4, 16}) + product).scalar_type() == at::kFloat);  // the residual add
}

TEST_CASE("MeasureMatmulGrid measures every (m, n, k) of the sizes", "[calibrate]") {
  auto grid = MeasureMatmulGrid("fp32", {16, 32});
  REQUIRE(grid.ok());
  REQUIRE(grid->size() == 8);
  for (double flops : *grid) CHECK((std::isfinite(flops) && flops > 0));

  auto dtype = MeasureMatmulGrid("int8", {16, 32});
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.status().message() == "unknown dtype 'int8'");
  auto none = MeasureMatmulGrid("fp32", {});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "no matmul sizes");
  auto zero = MeasureMatmulGrid("fp32", {0, 16});
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "matrix size must be positive");
  auto layout = MeasureMatmulGrid("fp32", {16, 32}, "tt");
  REQUIRE_FALSE(layout.ok());
  CHECK(layout.status().message() == "unknown matmul layout 'tt'");
  for (const char* transposed : {"nt", "tn"}) {
    auto t = MeasureMatmulGrid("fp32", {16, 32}, transposed);
    REQUIRE(t.ok());
    CHECK(t->size() == 8);
  }
}

// On a CPU without AVX512-BW LibTorch 1.13 runs bf16 matmuls in its own fallback gemm, which
// reads a transposed B about three times slower than a row-major one (1.6 against 5.1 GFLOP/s
// at 256³ on an AVX2-only AMD EPYC): the layout must reach the product as a transposed view, not
// a copy. With AVX512-BW oneDNN takes bf16 matmuls (mkldnn_bf16_device_check), and the layouts
// need not differ.
TEST_CASE("MeasureMatmulGrid reads B transposed for the nt layout", "[calibrate]") {
  if (CpuHasFlag("avx512bw")) {
    WARN("this CPU has AVX512-BW: oneDNN runs bf16 nt and nn alike, nothing to compare");
    return;
  }
  auto nn = MeasureMatmulGrid("bf16", {128, 256}, "nn");
  auto nt = MeasureMatmulGrid("bf16", {128, 256}, "nt");
  REQUIRE(nn.ok());
  REQUIRE(nt.ok());
  CHECK(nt->back() < 0.6 * nn->back());  // (256, 256, 256)
}

TEST_CASE("MeasureWorkerScaling: one worker on every core, one per core, two per core",
          "[calibrate]") {
  std::vector<std::pair<double, double>> ranges;
  auto scaling = MeasureWorkerScaling(2, 3, &ranges);
  REQUIRE(scaling.ok());
  REQUIRE(scaling->size() == 3);
  CHECK((*scaling)[0].workers_per_node == 1);
  CHECK((*scaling)[1].workers_per_node == 2);
  CHECK((*scaling)[2].workers_per_node == 4);
  // One single-threaded worker per core is the reference the per-core figures describe, in
  // every round.
  CHECK((*scaling)[1].efficiency == 1.0);
  CHECK(ranges[1] == std::pair<double, double>{1.0, 1.0});
  REQUIRE(ranges.size() == 3);
  for (size_t i = 0; i < scaling->size(); ++i) {
    const double e = (*scaling)[i].efficiency;
    CHECK(std::isfinite(e));
    CHECK(e > 0);
    // The median of three rounds lies within their range.
    CHECK(ranges[i].first <= e);
    CHECK(e <= ranges[i].second);
  }
  auto one_core = MeasureWorkerScaling(1, 1);
  REQUIRE(one_core.ok());
  REQUIRE(one_core->size() == 2);
  CHECK((*one_core)[0].workers_per_node == 1);
  CHECK((*one_core)[0].efficiency == 1.0);
  CHECK((*one_core)[1].workers_per_node == 2);
}

TEST_CASE("MeasureTrainingStepSeconds needs a thread", "[calibrate]") {
  auto none = MeasureTrainingStepSeconds(0);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "a training step needs at least 1 thread, not 0");
}

// A rendezvous file path for a reference step that does not exist yet (the measurement
// creates it, the test removes it; the process id keeps concurrent test runs apart).
std::string FreshStore(const std::string& tag) {
  const std::string store = "/tmp/accel_" + tag + "_step_test." + std::to_string(::getpid());
  ::unlink(store.c_str());
  return store;
}

// A reference step's timings over 2 ranks: both modes measured, a finite paired difference.
void CheckPairedTimings(const absl::StatusOr<PairedStepSample>& sample) {
  REQUIRE(sample.ok());
  CHECK(sample->group_size == 2);
  CHECK(sample->with_collectives_seconds > 0);
  CHECK(sample->without_collectives_seconds > 0);
  CHECK(std::isfinite(sample->paired_difference_seconds));
}

// The reference step's all-reduces, as executor/models/tensor_parallel.cc makes them for the
// step-time benchmark's GPT-2 (4 layers, h 256) on 8 x 128 tokens: 1 MiB activations (the
// embedding's output, two block outputs per layer forward, two input gradients per layer and
// the head's input gradient backward) and the loss's three 4 KiB row vectors (max, target
// logit, sum of exponentials).
TEST_CASE("MeasureTensorParallelStep times the step with its all-reduces and without them",
          "[calibrate]") {
  const std::string store = FreshStore("tp");
  auto sample = MeasureTensorParallelStep(2, 2, store);
  ::unlink(store.c_str());
  CheckPairedTimings(sample);
  const std::vector<double>& calls = sample->call_bytes;
  CHECK(calls.size() == 21);
  CHECK(std::count(calls.begin(), calls.end(), 1048576.0) == 18);
  CHECK(std::count(calls.begin(), calls.end(), 4096.0) == 3);
}

TEST_CASE("MeasureTensorParallelStep needs two ranks and a round", "[calibrate]") {
  auto one = MeasureTensorParallelStep(1, 1, "/tmp/unused");
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message() ==
        "a tensor-parallel step needs at least 2 ranks and 1 round, not 1 and 1");
  CHECK_FALSE(MeasureTensorParallelStep(2, 0, "/tmp/unused").ok());
}

// The reference data-parallel step counts only the trainer's bucket all-reduces (not the loss's
// or the gradient norm's): together they carry every fp32 gradient of the model once, in
// buckets closed at the planner's h² = 65,536 elements.
TEST_CASE("MeasureDataParallelStep times the step with its bucket all-reduces and without them",
          "[calibrate]") {
  const std::string store = FreshStore("dp");
  auto sample = MeasureDataParallelStep(2, 1, 65536, store);
  ::unlink(store.c_str());
  CheckPairedTimings(sample);
  auto model = BuildCausalLm(ModelConfig{}, 1, {});
  REQUIRE(model.ok());
  double parameter_bytes = 0;
  for (const torch::Tensor& p : (*model)->parameters()) parameter_bytes += 4.0 * p.numel();
  const std::vector<double>& calls = sample->call_bytes;
  double total = 0;
  for (double b : calls) total += b;
  CHECK(total == parameter_bytes);
  CHECK(calls.size() > 1);
  // Every bucket but the last closes once it holds at least 65,536 gradients.
  CHECK(std::all_of(calls.begin(), calls.end() - 1, [](double b) { return b >= 65536.0 * 4; }));
}

TEST_CASE("MeasureDataParallelStep needs two ranks, a round and a bucket size", "[calibrate]") {
  auto one = MeasureDataParallelStep(1, 1, 65536, "/tmp/unused");
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message() ==
        "a data-parallel step needs at least 2 ranks, 1 round and 1 element per bucket, not 1, 1 "
        "and 65536");
  CHECK_FALSE(MeasureDataParallelStep(2, 0, 65536, "/tmp/unused").ok());
  CHECK_FALSE(MeasureDataParallelStep(2, 1, 0, "/tmp/unused").ok());
}

TEST_CASE("MeasureAdamWSecondsPerParameter times the executor's AdamW step", "[calibrate]") {
  auto seconds = MeasureAdamWSecondsPerParameter(262144);
  REQUIRE(seconds.ok());
  // At least one read of 4 B per parameter at any plausible bandwidth (< 1 TB/s), and at most a
  // microsecond: about 3 ns on the build VM.
  CHECK(*seconds > 4e-12);
  CHECK(*seconds < 1e-6);
  auto few = MeasureAdamWSecondsPerParameter(1000);
  REQUIRE_FALSE(few.ok());
  CHECK(few.status().message() == "the optimizer step needs at least 262144 parameters, not 1000");
}

}  // namespace
}  // namespace accel::exec
