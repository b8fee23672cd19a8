// Starting training from Hugging Face weights (model.init_from) under sharding, tensor and
// pipeline parallelism (Trainer::LoadPretrained): every rank ends up with exactly its part of the
// checkpoint, copies out of the mapped file only the ranges it owns (plus at most a partial row
// at each end of a range), and then trains like one rank started from the same file.
#include <torch/torch.h>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "common/remove_tree.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/models/causal_lm.h"
#include "executor/models/tensor_parallel.h"
#include "parity.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

using accel::testing::RemoveDir;

using testing::RankOutcome;
using testing::TinyPlan;
using testing::Train;
using Weights = std::map<std::string, torch::Tensor>;

// Tolerances as in tensor_parallel_test and pipeline_test: the layouts here change only the
// order of fp32 sums (data-parallel means, row- and vocabulary-parallel sums, the tied
// embedding's two gradient contributions), a few ulps per step; through 2 SGD steps that stays
// below 1e-5 relative in weights and 1e-6 in losses, while a parameter loaded from the wrong
// range or slice differs by O(1).
using testing::kLossEps;    // 1e-6 relative (parity.h)
using testing::kWeightRel;  // 1e-5 relative

// Writes a seeded model of `plan`'s dimensions (not Train's seed, and norm weights and biases
// away from 1 and 0, so a parameter left at its initialization shows) as an fp32
// model.safetensors in a fresh directory; returns the directory and the saved tensors.
std::pair<fs::path, Weights> SaveHfCheckpoint(const ir::Plan& plan, const std::string& label) {
  const fs::path dir = fs::temp_directory_path() / ("accel_start_" + label + "_" + std::to_string(::getpid()));
  RemoveDir(dir);
  fs::create_directories(dir);
  std::shared_ptr<CausalLm> model = BuildCausalLm(ModelConfigFromPlan(plan.model()).value(), /*seed=*/11).value();
  Weights saved;
  SafetensorsFile file;
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters()) {
    if (item.value().dim() == 1) item.value().normal_(0.5, 0.1);
    saved[item.key()] = item.value().detach().clone();
    file.tensors.push_back(TensorToSafetensors(item.key(), item.value()).value());
  }
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  return {dir, saved};
}

// The bytes (fp32) a rank copies for its layout: per parameter the whole tensor-parallel slice at
// stage 0, else the rows of the slice its owned range touches.
uint64_t ExpectedBytes(const RankOutcome& r) {
  uint64_t elements = 0;
  for (const ParamSlot& slot : r.layout.params) {
    const torch::Tensor& w = r.weights.at(slot.name);
    const int64_t row = w.dim() <= 1 ? 1 : w.numel() / w.size(0);
    const bool whole = r.layout.stage == 0;
    const int64_t begin = whole ? 0 : slot.owned_begin, end = whole ? slot.numel : slot.owned_end;
    if (end > begin) elements += static_cast<uint64_t>(((end + row - 1) / row - begin / row) * row);
  }
  return elements * 4;
}

// Largest relative difference of a rank's (stage- and tp-local) weights from its slices of the
// whole weights `whole` (a tied copy compared with its original).
double MaxRelativeToSlices(const RankOutcome& r, const Weights& whole, int64_t tp) {
  double worst = 0;
  for (const ParamSlot& slot : r.layout.params) {
    const torch::Tensor& full = whole.at(slot.tied_to.empty() ? slot.name : slot.tied_to);
    const TpSplit split = slot.tp_split ? TpSplit{slot.tp_dim, slot.tp_parts} : TpSplit{};
    const torch::Tensor expected = TpSlice(full, split, r.tp_rank, tp);
    const torch::Tensor& w = r.weights.at(slot.name);
    if (w.sizes() != expected.sizes()) return 1e9;
    worst = std::max(worst, ((w - expected).abs() / (expected.abs() + 1e-3)).max().item<double>());
  }
  return worst;
}

struct Layout {
  const char* label;
  const char* model;
  int world;
  int tp;
  std::string yaml;
  std::vector<std::string> overrides;
  std::vector<std::string> reference_overrides;  // the one-rank job with the same global batch
};

void CheckStartsFromCheckpoint(const Layout& layout) {
  INFO(layout.label);
  const ir::Plan plan = TinyPlan(layout.model, layout.world, layout.yaml, layout.overrides);
  const auto [dir, saved] = SaveHfCheckpoint(plan, layout.label);

  // Before any step: each rank holds its part of the checkpoint bitwise and copied its ranges.
  const std::vector<RankOutcome> loaded = Train(plan, 0, {}, dir.string());
  for (size_t r = 0; r < loaded.size(); ++r) {
    INFO("rank " << r << " (stage " << loaded[r].stage << ", tp rank " << loaded[r].tp_rank << ")");
    CHECK(MaxRelativeToSlices(loaded[r], saved, layout.tp) == 0.0);
    uint64_t slice_bytes = 0;
    for (const ParamSlot& slot : loaded[r].layout.params) slice_bytes += 4 * slot.numel;
    const uint64_t copied = loaded[r].pretrained_read.bytes_copied;
    INFO("copied " << copied << " bytes of the " << slice_bytes << " its stage and tp slices hold");
    CHECK(copied == ExpectedBytes(loaded[r]));
    // Sharded over 2 ranks: about half of its slices.
    if (loaded[r].layout.stage > 0) CHECK(copied < 0.6 * slice_bytes);
  }

  // Training from there equals one rank trained from the same file.
  const ir::Plan one = TinyPlan(layout.model, 1, "parallel: {data_replicate: 1}\n", layout.reference_overrides);
  REQUIRE(one.batch().global_batch_size() == plan.batch().global_batch_size());
  const RankOutcome reference = Train(one, 2, {}, dir.string())[0];
  Weights reference_weights = reference.weights;
  const std::vector<RankOutcome> trained = Train(plan, 2, {}, dir.string());
  for (size_t r = 0; r < trained.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(trained[r].losses.size() == 2);
    for (size_t s = 0; s < 2; ++s) CHECK(trained[r].losses[s] == Approx(reference.losses[s]).epsilon(kLossEps));
    CHECK(MaxRelativeToSlices(trained[r], reference_weights, layout.tp) < kWeightRel);
  }
  // And the file did matter: the first loss from it differs from the seeded model's.
  CHECK(reference.losses[0] != Train(one, 1)[0].losses[0]);
  RemoveDir(dir);
}

TEST_CASE("init_from under ZeRO-3, tp 2 x ZeRO-3 and pp 2 x ZeRO-2: each rank reads its owned "
          "ranges, holds its part bitwise and trains like one rank") {
  CheckStartsFromCheckpoint({"zero3", testing::kTinyGpt2, 2, 1,
                             "parallel: {data_replicate: 1, data_shard: 2}\nsharding: {stage: 3, bucket_size: 3000}\n",
                             {}, {"data.micro_batch_size=4"}});
  CheckStartsFromCheckpoint({"tp2_zero3", testing::kTinyLlama, 4, 2,
                             "parallel: {data_replicate: 1, data_shard: 2, tensor: 2, sequence_parallel: true}\n"
                             "sharding: {stage: 3, bucket_size: 3000}\n",
                             {}, {"data.micro_batch_size=4"}});
  CheckStartsFromCheckpoint({"pp2_zero2", testing::kTinyGpt2, 4, 1,
                             "parallel: {data_replicate: 1, data_shard: 2, pipeline: 2}\n"
                             "sharding: {stage: 2, bucket_size: 3000}\n",
                             {"data.grad_accum_steps=2"}, {"data.micro_batch_size=4", "data.grad_accum_steps=2"}});
}

}  // namespace
}  // namespace accel::exec
