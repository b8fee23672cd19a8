// Loss scaling (executor/train/loss_scaler.h) in the trainer: fp16 itself needs CUDA (LibTorch's
// CPU kernels have no fp16 matmul), so these tests run fp32 training with the scaler on. The
// scaler's arithmetic is what they pin: a power-of-two scale changes no bit of fp32 training,
// an overflow skips the step and backs the scale off, clean steps grow it back, and checkpoints
// keep it.
#include <torch/torch.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "common/remove_tree.h"
#include "executor/models/causal_lm.h"
#include "executor/train/loss_scaler.h"
#include "executor/train/trainer.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

using accel::testing::RemoveDir;

std::shared_ptr<CausalLm> TinyModel() {
  ModelConfig c;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 4;
  c.ffn_size = 64;
  c.vocab_size = 64;
  c.max_seq_len = 16;
  return *BuildCausalLm(c, 77);
}

TrainerOptions Options(LossScaling kind) {
  TrainerOptions o;
  o.schedule.peak_lr = 1e-2;
  o.schedule.cosine = false;
  o.grad_clip_norm = 1.0;
  o.loss_scaling.kind = kind;
  o.loss_scaling.initial_scale = 65536;
  o.loss_scaling.growth_interval = 2;
  return o;
}

std::vector<torch::Tensor> Batch(int step) {
  torch::manual_seed(100 + step);
  return {torch::randint(0, 64, {2, 17}, torch::kLong), torch::randint(0, 64, {2, 17}, torch::kLong)};
}

TEST_CASE("loss scaling by a power of two leaves fp32 training bitwise unchanged") {
  auto plain_model = TinyModel();
  auto scaled_model = TinyModel();
  auto plain = *Trainer::Create(plain_model, CausalLmLoss(), Options(LossScaling::kNone), nullptr);
  auto scaled = *Trainer::Create(scaled_model, CausalLmLoss(), Options(LossScaling::kDynamic), nullptr);
  std::vector<double> scales;
  for (int s = 0; s < 5; ++s) {
    StepResult a = *plain->Step(Batch(s));
    StepResult b = *scaled->Step(Batch(s));
    CHECK(a.loss == b.loss);
    CHECK(a.grad_norm == b.grad_norm);
    CHECK_FALSE(b.skipped);
    scales.push_back(b.loss_scale);
  }
  // Growth interval 2: the scale doubles after every second clean step.
  CHECK(scales == std::vector<double>{65536, 65536, 131072, 131072, 262144});
  auto pa = plain_model->named_parameters();
  for (const auto& item : scaled_model->named_parameters()) CHECK(torch::equal(item.value(), pa[item.key()]));
}

TEST_CASE("an overflow skips the step and halves the scale, clean steps grow it back") {
  for (LossScaling kind : {LossScaling::kDynamic, LossScaling::kStatic}) {
    const bool dynamic = kind == LossScaling::kDynamic;
    INFO((dynamic ? "dynamic" : "static"));
    auto model = TinyModel();
    auto trainer = *Trainer::Create(model, CausalLmLoss(), Options(kind), nullptr);
    // Inject the overflow an fp16 backward would produce: one gradient becomes inf.
    bool inject = false;
    torch::Tensor victim = model->named_parameters()["transformer.h.0.mlp.c_fc.weight"];
    victim.register_hook([&inject](torch::Tensor g) {
      return inject ? g * std::numeric_limits<float>::infinity() : g;
    });
    REQUIRE_FALSE(trainer->Step(Batch(0))->skipped);
    std::map<std::string, torch::Tensor> before;
    for (const auto& item : model->named_parameters()) before[item.key()] = item.value().clone();

    inject = true;
    StepResult overflow = *trainer->Step(Batch(1));
    inject = false;
    CHECK(overflow.skipped);
    CHECK(overflow.loss_scale == 65536);
    CHECK_FALSE(std::isfinite(overflow.grad_norm));  // inf, or NaN where inf met a zero
    CHECK(trainer->step() == 2);  // the step counts
    for (const auto& item : model->named_parameters()) CHECK(torch::equal(item.value(), before[item.key()]));

    StepResult next = *trainer->Step(Batch(2));
    CHECK_FALSE(next.skipped);
    CHECK(next.loss_scale == (dynamic ? 32768 : 65536));
    CHECK(std::isfinite(next.loss));
    // Dynamic: the second clean step after the backoff completes the growth interval.
    CHECK(trainer->Step(Batch(3))->loss_scale == (dynamic ? 32768 : 65536));
    CHECK(trainer->Step(Batch(4))->loss_scale == 65536);
  }
}

TEST_CASE("the loss scale and its growth count survive a checkpoint") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("accel_loss_scale_" + std::to_string(::getpid()));
  RemoveDir(dir);
  CheckpointStore store(dir.string(), 1);
  TrainerOptions options = Options(LossScaling::kDynamic);
  options.loss_scaling.growth_interval = 3;
  auto model = TinyModel();
  auto trainer = *Trainer::Create(model, CausalLmLoss(), options, nullptr);
  for (int s = 0; s < 4; ++s) REQUIRE(trainer->Step(Batch(s)).ok());  // grows once, then 1 clean
  REQUIRE(store.Write(trainer->step(), *trainer->SaveState({})).ok());
  StepResult straight5 = *trainer->Step(Batch(4));
  StepResult straight6 = *trainer->Step(Batch(5));

  auto resumed = *Trainer::Create(TinyModel(), CausalLmLoss(), options, nullptr);
  REQUIRE(resumed->LoadState(store.LatestGood()->path).ok());
  StepResult again5 = *resumed->Step(Batch(4));
  StepResult again6 = *resumed->Step(Batch(5));
  CHECK(again5.loss_scale == straight5.loss_scale);
  CHECK(again6.loss_scale == straight6.loss_scale);
  CHECK(again6.loss == straight6.loss);
  RemoveDir(dir);
}

TEST_CASE("loss scaler options and restored state are validated") {
  LossScalerOptions o;
  o.initial_scale = 0;
  CHECK(LossScaler::Validate(o).message() == "loss scaling: initial_scale must be finite and > 0, got 0");
  o = {};
  o.backoff_factor = 1;
  CHECK(LossScaler::Validate(o).message() == "loss scaling: backoff_factor must be in (0, 1), got 1");
  o = {};
  o.growth_factor = 0.5;
  CHECK(LossScaler::Validate(o).message() == "loss scaling: growth_factor must be >= 1, got 0.5");
  o = {};
  o.growth_interval = 0;
  CHECK(LossScaler::Validate(o).message() == "loss scaling: growth_interval must be >= 1, got 0");
  LossScaler scaler({LossScaling::kDynamic});
  CHECK(scaler.Restore(-1, 0).message() == "loss scaler state (scale -1, growth tracker 0) is invalid");
  // A grown scale that would overflow to inf is not taken (GradScaler keeps the old one).
  LossScalerOptions huge;
  huge.kind = LossScaling::kDynamic;
  huge.initial_scale = std::numeric_limits<double>::max();
  huge.growth_interval = 1;
  LossScaler top(huge);
  CHECK(top.Update(false));
  CHECK(top.scale() == std::numeric_limits<double>::max());
}

}  // namespace
}  // namespace accel::exec
