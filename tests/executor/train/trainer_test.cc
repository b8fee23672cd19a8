#include "executor/train/trainer.h"

#include <torch/torch.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "../multi_rank.h"
#include "common/remove_tree.h"
#include "data/byte_tokenizer.h"
#include "executor/train/lr_schedule.h"

namespace accel::exec {
namespace {
namespace fs = std::filesystem;
using testing::Expect;
using testing::Ok;
using testing::RunRanks;

// ---------------------------------------------------------------------------------------------
// Accelerate's gradient-accumulation example (docs, "Performing gradient accumulation with
// Accelerate", self-contained example): x = 1..8, y = 2x, model y = x @ w with w a [1, 1] zero
// tensor, MSE loss, SGD lr 0.02, 4 micro-batches of 2 vs one batch of 8, one optimizer update.
// Analytically dL/dw = mean(2 (w - 2) x^2) = -4 * 204 / 8 = -102 at w = 0, so w = 0.02 * 102 = 2.04.

class Scalar : public torch::nn::Module {
 public:
  Scalar() { w = register_parameter("w", torch::zeros({1, 1})); }
  torch::Tensor w;
};

torch::Tensor LinearLoss(torch::nn::Module& module, const torch::Tensor& batch) {
  auto& m = dynamic_cast<Scalar&>(module);
  torch::Tensor x = batch.narrow(1, 0, 1);
  torch::Tensor y = batch.narrow(1, 1, 1);
  return torch::mse_loss(torch::matmul(x, m.w), y);
}

torch::Tensor Xy(int64_t begin, int64_t count) {
  torch::Tensor x = torch::arange(begin + 1, begin + count + 1, torch::kFloat).view({-1, 1});
  return torch::cat({x, 2 * x}, 1);
}

TrainerOptions SgdOptions() {
  TrainerOptions o;
  o.optimizer = OptimizerKind::kSgd;
  o.schedule.peak_lr = 0.02;
  o.schedule.cosine = false;
  return o;
}

std::string Fixed5(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5f", v);
  return buf;
}

TEST_CASE("Accelerate's linear fixture: accumulation gives w = 2.04000 like the full batch") {
  auto full_model = std::make_shared<Scalar>();
  auto full = Trainer::Create(full_model, LinearLoss, SgdOptions(), nullptr);
  REQUIRE(full.ok());
  REQUIRE((*full)->Step({Xy(0, 8)}).ok());

  auto acc_model = std::make_shared<Scalar>();
  auto acc = Trainer::Create(acc_model, LinearLoss, SgdOptions(), nullptr);
  REQUIRE(acc.ok());
  auto result = (*acc)->Step({Xy(0, 2), Xy(2, 2), Xy(4, 2), Xy(6, 2)});
  REQUIRE(result.ok());

  CHECK(Fixed5(full_model->w.item<double>()) == "2.04000");
  CHECK(Fixed5(acc_model->w.item<double>()) == "2.04000");
  CHECK(full_model->w.item<float>() == Approx(acc_model->w.item<float>()).epsilon(1e-6));
  // Loss at w = 0 is mean((2x)^2) = 4 * mean(x^2) = 102.
  CHECK(result->loss == Approx(102.0));
}

TEST_CASE("Accelerate's linear fixture over 2 data-parallel ranks with accumulation 2") {
  std::vector<double> weights(2);
  auto errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto world = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world.status());
    auto model = std::make_shared<Scalar>();
    auto trainer = Trainer::Create(model, LinearLoss, SgdOptions(), *world);
    Ok(trainer.status());
    // Rank r reads micro-batches r and r + 2 of the 4 two-sample micro-batches.
    auto step = (*trainer)->Step({Xy(2 * rank, 2), Xy(2 * (rank + 2), 2)});
    Ok(step.status());
    Expect(step->loss == 102.0, "loss averaged over ranks");
    weights[rank] = model->w.item<double>();
  });
  for (const std::string& e : errors) CHECK(e == "");
  CHECK(Fixed5(weights[0]) == "2.04000");
  CHECK(weights[0] == weights[1]);
}

// ---------------------------------------------------------------------------------------------
// Tiny GPT fixtures.

ModelConfig TinyGpt(ModelArch arch = ModelArch::kGpt2) {
  ModelConfig c;
  c.arch = arch;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = arch == ModelArch::kGpt2 ? 4 : 2;
  c.ffn_size = arch == ModelArch::kGpt2 ? 128 : 64;
  c.vocab_size = 256;
  c.max_seq_len = 16;
  c.tie_embeddings = arch == ModelArch::kGpt2;
  return c;
}

std::vector<uint32_t> Corpus() {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "line " + std::to_string(i * 7919 % 1000) + ": the quick brown fox\n";
  return ByteTokenizer::Encode(text);
}

std::unique_ptr<WindowDataset> Dataset(int dp_rank, int dp_size, int64_t seq_len = 16) {
  WindowDatasetOptions o;
  o.seq_len = seq_len;
  o.seed = 11;
  o.dp_rank = dp_rank;
  o.dp_size = dp_size;
  return *WindowDataset::Create(Corpus(), o, "corpus");
}

TrainerOptions AdamOptions() {
  TrainerOptions o;
  o.schedule.peak_lr = 3e-3;
  o.schedule.warmup_steps = 2;
  o.schedule.total_steps = 10;
  o.weight_decay = 0.1;
  o.grad_clip_norm = 1.0;
  return o;
}

std::shared_ptr<CausalLm> Model(ModelArch arch = ModelArch::kGpt2) { return *BuildCausalLm(TinyGpt(arch), 1234); }

void CheckClose(CausalLm& a, CausalLm& b, double atol) {
  auto pb = b.named_parameters();
  for (const auto& item : a.named_parameters()) {
    INFO(item.key());
    CHECK(torch::allclose(item.value(), pb[item.key()], 1e-4, atol));
  }
}

TEST_CASE("gradient accumulation on GPT-2 matches one large batch") {
  auto big_model = Model();
  auto acc_model = Model();
  auto big = Trainer::Create(big_model, CausalLmLoss(), AdamOptions(), nullptr);
  auto acc = Trainer::Create(acc_model, CausalLmLoss(), AdamOptions(), nullptr);
  REQUIRE(big.ok());
  REQUIRE(acc.ok());
  auto data = Dataset(0, 1);
  for (int step = 0; step < 3; ++step) {
    std::vector<torch::Tensor> micro = NextMicroBatches(*data, 2, 2, torch::kCPU);
    auto r_big = (*big)->Step({torch::cat(micro)});
    auto r_acc = (*acc)->Step(micro);
    REQUIRE(r_big.ok());
    REQUIRE(r_acc.ok());
    CHECK(r_big->loss == Approx(r_acc->loss).epsilon(1e-5));
    CHECK(r_big->grad_norm == Approx(r_acc->grad_norm).epsilon(1e-4));
  }
  CheckClose(*big_model, *acc_model, 1e-5);
}

TEST_CASE("data parallel: 2 ranks x micro batch b equals 1 rank x 2b, buckets overlap backward") {
  const int steps = 3;
  // Reference: one rank reading the interleaved order with micro batch 4.
  auto ref_model = Model();
  auto ref = Trainer::Create(ref_model, CausalLmLoss(), AdamOptions(), nullptr);
  REQUIRE(ref.ok());
  auto ref_data = Dataset(0, 1);
  std::vector<double> ref_losses;
  for (int s = 0; s < steps; ++s) {
    // Rows must be grouped as the ranks see them: rank 0 gets even windows, rank 1 odd ones.
    auto r = (*ref)->Step(NextMicroBatches(*ref_data, 4, 1, torch::kCPU));
    REQUIRE(r.ok());
    ref_losses.push_back(r->loss);
  }

  std::vector<std::shared_ptr<CausalLm>> models(2);
  std::vector<std::vector<double>> losses(2);
  std::vector<GradSyncStats> stats(2);
  auto errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto world = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world.status());
    models[rank] = Model();
    TrainerOptions o = AdamOptions();
    o.bucket_bytes = 16 * 1024;  // several buckets for this ~40k-parameter model
    auto trainer = Trainer::Create(models[rank], CausalLmLoss(), o, *world);
    Ok(trainer.status());
    auto data = Dataset(rank, 2);
    for (int s = 0; s < steps; ++s) {
      auto r = (*trainer)->Step(NextMicroBatches(*data, 2, 1, torch::kCPU));
      Ok(r.status());
      losses[rank].push_back(r->loss);
      stats[rank] = r->sync;
    }
  });
  for (const std::string& e : errors) CHECK(e == "");
  REQUIRE(models[0] != nullptr);
  REQUIRE(models[1] != nullptr);
  for (int s = 0; s < steps; ++s) {
    CHECK(losses[0][s] == losses[1][s]);
    CHECK(losses[0][s] == Approx(ref_losses[s]).epsilon(1e-5));
  }
  CheckClose(*models[0], *ref_model, 1e-5);
  auto p1 = models[1]->named_parameters();
  for (const auto& item : models[0]->named_parameters()) CHECK(torch::equal(item.value(), p1[item.key()]));
  CHECK(stats[0].buckets > 2);
  // All buckets but possibly the last (embeddings, whose gradient arrives last) launch from hooks.
  CHECK(stats[0].launched_during_backward >= stats[0].buckets - 1);
  CHECK(stats[0].first_launch_seconds < stats[0].backward_seconds);
}

TEST_CASE("data parallel with accumulation syncs once per update and matches the reference") {
  auto ref_model = Model(ModelArch::kLlama);
  auto ref = Trainer::Create(ref_model, CausalLmLoss(), AdamOptions(), nullptr);
  REQUIRE(ref.ok());
  auto ref_data = Dataset(0, 1);
  // Global batch 8 = 2 ranks x micro 2 x accumulation 2. In the single-rank reference the four
  // windows of micro-step k are rows {rank0 k, rank1 k}: the dataset interleaves ranks, so reading
  // 4 windows per micro-step in order gives exactly the ranks' union.
  for (int s = 0; s < 2; ++s) REQUIRE((*ref)->Step(NextMicroBatches(*ref_data, 4, 2, torch::kCPU)).ok());

  std::vector<std::shared_ptr<CausalLm>> models(2);
  auto errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto world = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world.status());
    models[rank] = Model(ModelArch::kLlama);
    auto trainer = Trainer::Create(models[rank], CausalLmLoss(), AdamOptions(), *world);
    Ok(trainer.status());
    auto data = Dataset(rank, 2);
    for (int s = 0; s < 2; ++s) {
      auto r = (*trainer)->Step(NextMicroBatches(*data, 2, 2, torch::kCPU));
      Ok(r.status());
      Expect(r->sync.buckets >= 1, "synchronized on the last micro-step");
    }
  });
  for (const std::string& e : errors) CHECK(e == "");
  REQUIRE(models[0] != nullptr);
  CheckClose(*models[0], *ref_model, 1e-5);
}

// ---------------------------------------------------------------------------------------------
// Exact resume.

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("accel_trainer_" + std::to_string(::getpid()))) {
    std::error_code ec;
    RemoveTree(path.string(), ec);
  }
  ~TempDir() {
    std::error_code ec;
    RemoveTree(path.string(), ec);
  }
  fs::path path;
};

TEST_CASE("2N steps straight equal N steps, checkpoint, resume, N steps bitwise") {
  for (ComputePrecision precision : {ComputePrecision::kFp32, ComputePrecision::kBf16}) {
    INFO("bf16 " << (precision == ComputePrecision::kBf16));
    const int n = 3;
    TrainerOptions o = AdamOptions();
    o.precision = precision;

    auto straight_model = Model();
    auto straight = *Trainer::Create(straight_model, CausalLmLoss(), o, nullptr);
    auto straight_data = Dataset(0, 1);
    std::vector<double> straight_losses;
    for (int s = 0; s < 2 * n; ++s) {
      auto r = straight->Step(NextMicroBatches(*straight_data, 2, 2, torch::kCPU));
      REQUIRE(r.ok());
      straight_losses.push_back(r->loss);
    }

    TempDir dir;
    CheckpointStore store(dir.path.string(), 2);
    {
      auto first_model = Model();
      auto first = *Trainer::Create(first_model, CausalLmLoss(), o, nullptr);
      auto data = Dataset(0, 1);
      for (int s = 0; s < n; ++s) {
        auto r = first->Step(NextMicroBatches(*data, 2, 2, torch::kCPU));
        REQUIRE(r.ok());
        CHECK(r->loss == straight_losses[s]);
      }
      auto files = first->SaveState(data->GlobalPosition());
      REQUIRE(files.ok());
      REQUIRE(store.Write(first->step(), *files).ok());
    }
    // A fresh process would build the model from a different seed; loading must overwrite it all.
    auto resumed_model = *BuildCausalLm(TinyGpt(), 999);
    auto resumed = *Trainer::Create(resumed_model, CausalLmLoss(), o, nullptr);
    auto latest = store.LatestGood();
    REQUIRE(latest.ok());
    auto position = resumed->LoadState(latest->path);
    REQUIRE(position.ok());
    CHECK(resumed->step() == n);
    auto data = Dataset(0, 1);
    REQUIRE(data->SeekGlobal(*position).ok());
    for (int s = n; s < 2 * n; ++s) {
      auto r = resumed->Step(NextMicroBatches(*data, 2, 2, torch::kCPU));
      REQUIRE(r.ok());
      CHECK(r->loss == straight_losses[s]);
    }
    auto ps = straight_model->named_parameters();
    for (const auto& item : resumed_model->named_parameters()) {
      INFO(item.key());
      CHECK(torch::equal(item.value(), ps[item.key()]));
    }
  }
}

TEST_CASE("resume falls back past a corrupt checkpoint and rejects a mismatched model") {
  TempDir dir;
  CheckpointStore store(dir.path.string(), 3);
  auto model = Model();
  auto trainer = *Trainer::Create(model, CausalLmLoss(), AdamOptions(), nullptr);
  auto data = Dataset(0, 1);
  for (int s = 0; s < 2; ++s) {
    REQUIRE(trainer->Step(NextMicroBatches(*data, 2, 1, torch::kCPU)).ok());
    REQUIRE(store.Write(trainer->step(), *trainer->SaveState(data->GlobalPosition())).ok());
  }
  const fs::path newest = dir.path / CheckpointStore::StepDirName(2) / "optimizer.pt";
  fs::resize_file(newest, fs::file_size(newest) / 2);
  std::vector<std::string> skipped;
  auto latest = store.LatestGood(&skipped);
  REQUIRE(latest.ok());
  CHECK(latest->step == 1);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("optimizer.pt has") != std::string::npos);

  auto other = *Trainer::Create(Model(), CausalLmLoss(), AdamOptions(), nullptr);
  auto position = other->LoadState(latest->path);
  REQUIRE(position.ok());
  CHECK(other->step() == 1);
  // Loading the corrupt one directly reports DataLoss rather than reading garbage.
  CHECK(other->LoadState((dir.path / CheckpointStore::StepDirName(2)).string()).status().code() ==
        absl::StatusCode::kDataLoss);

  ModelConfig wider = TinyGpt();
  wider.hidden_size = 64;
  auto mismatched = *Trainer::Create(*BuildCausalLm(wider, 1), CausalLmLoss(), AdamOptions(), nullptr);
  auto bad = mismatched->LoadState(latest->path);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("has shape [256, 32], expected [256, 64]") != std::string::npos);

  // A run that keeps sharded state (here bf16 parameters) cannot take an unsharded checkpoint's
  // torch-serialized optimizer state: refused, naming the way out.
  auto bf16_model = Model();
  bf16_model->to(torch::kBFloat16);
  auto sharded = *Trainer::Create(bf16_model, CausalLmLoss(), AdamOptions(), nullptr);
  REQUIRE(sharded->ShardedCheckpoint());
  CHECK(sharded->LoadState(latest->path).status().message() ==
        latest->path + " is an unsharded checkpoint (model.safetensors, optimizer.pt): it resumes "
                       "only at sharding.stage 0 with fp32 parameters and no tensor or pipeline "
                       "parallelism; `accel export` turns its weights into model.safetensors");
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("bf16 autocast computes in bf16 and stays close to fp32") {
  auto model = Model(ModelArch::kLlama);
  auto data = Dataset(0, 1);
  torch::Tensor batch = NextMicroBatches(*data, 2, 1, torch::kCPU)[0];
  torch::NoGradGuard no_grad;
  const double fp32 = CausalLmLoss()(*model, batch).item<double>();
  torch::Tensor logits;
  double bf16 = 0;
  {
    AutocastScope scope(torch::kCPU, ComputePrecision::kBf16);
    logits = model->Forward(batch.narrow(1, 0, 16));
    bf16 = CausalLmLoss()(*model, batch).item<double>();
  }
  CHECK(logits.scalar_type() == torch::kBFloat16);
  CHECK(bf16 == Approx(fp32).epsilon(0.02));
  // The scope restores fp32 compute.
  CHECK(model->Forward(batch.narrow(1, 0, 16)).scalar_type() == torch::kFloat);
}

TEST_CASE("learning-rate schedule: linear warmup then cosine to the floor") {
  LrSchedule s;
  s.peak_lr = 1.0;
  s.warmup_steps = 4;
  s.total_steps = 14;
  s.min_lr_ratio = 0.1;
  CHECK(LearningRateAt(s, 0) == Approx(0.25));
  CHECK(LearningRateAt(s, 3) == Approx(1.0));
  CHECK(LearningRateAt(s, 4) == Approx(1.0));
  CHECK(LearningRateAt(s, 9) == Approx(0.55));  // halfway: floor + (1 - floor) / 2
  CHECK(LearningRateAt(s, 14) == Approx(0.1));
  CHECK(LearningRateAt(s, 100) == Approx(0.1));
  s.cosine = false;
  CHECK(LearningRateAt(s, 50) == Approx(1.0));
  s.min_lr_ratio = 2;
  CHECK(ValidateLrSchedule(s).message() == "min_lr_ratio must be in [0, 1], got 2");
}

}  // namespace
}  // namespace accel::exec
