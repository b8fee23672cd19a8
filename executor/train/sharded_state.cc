// Trainer state of sharding stages 1–3 as flat ranges of global tensors (sharded_tensors.h):
// every rank writes the ranges it owns and reads the ranges its layout owns on resume, so a
// checkpoint saved on one layout (stage, degree) loads into another. Under another
// tensor-parallel degree a rank reads each tp-split tensor whole and re-slices it.
#include <torch/torch.h>
#include <torch/version.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "checkpoint/sharded_tensors.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/models/tensor_parallel.h"
#include "executor/train/optimizer_state_key.h"
#include "executor/train/trainer.h"

namespace accel::exec {
namespace {

struct TpPlacement;
absl::StatusOr<TensorSlice> Slice(const std::string& name, const torch::Tensor& values,
                                  const TpPlacement& tp, const ParamSlot& slot);

// Reads `name`'s owned range into `target` (same element count), casting the dtype.
absl::Status ReadInto(const ShardedTensorReader& reader, const std::string& name,
                      const std::string& dtype, const ParamSlot& slot, torch::Tensor target) {
  absl::StatusOr<std::string> bytes = reader.ReadRange(name, slot.owned_begin, slot.owned_end);
  if (!bytes.ok()) return bytes.status();
  SafetensorsTensor record{name, dtype, {slot.owned_numel()}, *std::move(bytes)};
  absl::StatusOr<at::Tensor> values = SafetensorsToTensor(record);
  if (!values.ok()) return values.status();
  torch::NoGradGuard no_grad;
  target.view({-1}).copy_(*values);
  return absl::OkStatus();
}

// Every tensor in the checkpoint, by name.
std::map<std::string, GlobalTensorInfo> InfosOf(const ShardedTensorReader& reader) {
  std::map<std::string, GlobalTensorInfo> infos;
  for (const GlobalTensorInfo& info : reader.Tensors()) infos[info.name] = info;
  return infos;
}

// Where one parameter's tensors sit in the checkpoint under tensor parallelism. A tp-split
// parameter is stored "tp-major": global shape [tp, local shape...], tp rank r's slice at flat
// offset r · numel, so the existing flat ranges work unchanged. Replicated parameters keep their
// shape and are written by tp rank 0 only. A slice held by R tp ranks (ParamSlot::tp_replicas)
// is stored once: [tp / R, local shape...], written by the first rank holding it, so the
// checkpoint reads as one split over tp / R ranks.
// A routed-expert tensor under expert parallelism holds experts [first, first + El) of `total`
// along dim 0 of its local shape: it is stored with all `total` experts (within its tp-major
// block), this rank's at element offset first · (numel / El), so any expert-parallel degree
// reads the same checkpoint.
struct TpPlacement {
  std::vector<int64_t> shape;
  int64_t offset = 0;
  bool writes = true;
};

// The experts this run's rank holds (Trainer's local_experts_): {0, 0} in a dense model.
struct ExpertSpan {
  int64_t first = 0;
  int64_t end = 0;
  int64_t total = 0;
  bool Split() const { return end - first < total; }
};

TpPlacement PlaceTp(const ParamSlot& slot, const std::vector<int64_t>& local_shape,
                    int64_t tp_rank, int64_t tp_size, const ExpertSpan& experts = {}) {
  TpPlacement out{local_shape, 0, true};
  int64_t block = slot.numel;  // elements of one tp rank's block in the stored tensor
  if (slot.routed_expert && experts.Split() && !out.shape.empty()) {
    const int64_t per_expert = slot.numel / out.shape[0];
    out.shape[0] = experts.total;
    out.offset = experts.first * per_expert;
    block = experts.total * per_expert;
  }
  if (tp_size <= 1) return out;
  if (!slot.tp_split) {
    out.writes = tp_rank == 0;
    return out;
  }
  out.writes = tp_rank % slot.tp_replicas == 0;
  out.shape.insert(out.shape.begin(), tp_size / slot.tp_replicas);
  out.offset += tp_rank / slot.tp_replicas * block;
  return out;
}

absl::StatusOr<TensorSlice> Slice(const std::string& name, const torch::Tensor& values,
                                  const TpPlacement& tp, const ParamSlot& slot) {
  absl::StatusOr<SafetensorsTensor> record = TensorToSafetensors(name, values.reshape({-1}));
  if (!record.ok()) return record.status();
  return TensorSlice{name, record->dtype, tp.shape, tp.offset + slot.owned_begin,
                     tp.offset + slot.owned_end, std::move(record->data)};
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) absl::StrAppend(&out, i ? ", " : "", shape[i]);
  return out + "]";
}

// How a checkpoint tensor relates to this run's layout of it: stored as this run stores it, or
// (a tp-split parameter) saved under another tensor-parallel degree, split over saved_degree
// ranks (1: whole), to be read whole, merged and sliced again.
struct TpSource {
  bool reshard = false;
  int64_t saved_degree = 1;
};

// The whole shape of a tp-split parameter whose local shape is `local`, over `degree` ranks.
std::vector<int64_t> WholeShape(std::vector<int64_t> local, const ParamSlot& slot, int64_t degree) {
  if (slot.tp_dim >= 0 && static_cast<size_t>(slot.tp_dim) < local.size()) local[slot.tp_dim] *= degree;
  return local;
}

absl::StatusOr<TpSource> MatchTp(const std::string& dir, const GlobalTensorInfo& info, const TpPlacement& tp,
                                 const ParamSlot& slot, const std::vector<int64_t>& local, int64_t tp_size) {
  if (info.shape == tp.shape) return TpSource{};
  if (slot.tp_split) {
    const std::vector<int64_t> run_whole = WholeShape(local, slot, tp_size / slot.tp_replicas);
    const bool saved_split = info.shape.size() == local.size() + 1;
    const int64_t saved_degree = saved_split ? info.shape[0] : 1;
    const std::vector<int64_t> saved_whole =
        saved_split ? WholeShape({info.shape.begin() + 1, info.shape.end()}, slot, saved_degree) : info.shape;
    if (saved_whole == run_whole) return TpSource{true, saved_degree};
    if (saved_whole.size() == run_whole.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir, ": tensor ", info.name, " saved under tensor-parallel degree ", saved_degree, " is ",
          ShapeText(saved_whole), " whole, but this run's degree ", tp_size, " needs ", ShapeText(run_whole),
          ": the vocabulary is padded to a multiple of 128 x tp (model.padded_vocab_size), and degrees that "
          "pad it differently cannot resume each other"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(dir, ": tensor ", info.name, " has shape ",
                                                 ShapeText(info.shape), " but this run expects ",
                                                 ShapeText(tp.shape)));
}

// Reads tensor `name` (saved as `source` says, dtype `dtype`, shape info.shape) whole, merges its
// tensor-parallel slices, takes this run's slice and of that the flat range `slot` owns, into
// `target`, casting the dtype. The merge and slice are exact copies (TpMerge, TpSlice), so the
// values are bitwise the saved ones.
absl::Status ReadResharded(const ShardedTensorReader& reader, const GlobalTensorInfo& info,
                           const std::string& dtype, const TpSource& source, const ParamSlot& slot,
                           int64_t tp_rank, int64_t tp_size, const ExpertSpan& experts, torch::Tensor target) {
  absl::StatusOr<std::string> bytes = reader.ReadWhole(info.name);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<at::Tensor> saved = SafetensorsToTensor({info.name, dtype, info.shape, *std::move(bytes)});
  if (!saved.ok()) return saved.status();
  // Saved slices are distinct (a replicated one stored once); this run's may be replicated.
  const TpSplit split{slot.tp_dim, slot.tp_parts};
  at::Tensor whole = *saved;
  if (source.saved_degree > 1) whole = TpMerge(saved->unbind(0), split);
  const TpSplit run_split{slot.tp_dim, slot.tp_parts, slot.tp_replicas};
  at::Tensor local = tp_size > 1 ? TpSlice(whole, run_split, tp_rank, tp_size) : whole;
  if (slot.routed_expert && experts.Split()) local = local.narrow(0, experts.first, experts.end - experts.first);
  torch::NoGradGuard no_grad;
  target.view({-1}).copy_(local.reshape({-1}).narrow(0, slot.owned_begin, slot.owned_numel()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Trainer::SaveShard() const {
  const ExpertSpan experts{local_experts_.first, local_experts_.second, num_experts_};
  std::vector<TensorSlice> slices;
  const ShardLayout& layout = sync_->layout();
  const std::vector<torch::Tensor>& opt = sync_->OptimizerParams();
  try {
    for (size_t i = 0; i < opt.size(); ++i) {
      const TpPlacement tp = PlaceTp(layout.params[i], shapes_[i], TpRank(), TpSize(), experts);
      if (!tp.writes) continue;
      const ParamSlot& slot = layout.params[i];
      const torch::Tensor& master = opt[i];
      // Whole tensors (stage 0) write the range this rank's dp_shard index owns.
      const bool whole = master.numel() == slot.numel && slot.owned_numel() != slot.numel;
      auto add = [&](const std::string& name, const torch::Tensor& t) -> absl::Status {
        torch::Tensor values = whole ? t.reshape({-1}).narrow(0, slot.owned_begin, slot.owned_numel()) : t;
        absl::StatusOr<TensorSlice> s = Slice(name, values, tp, slot);
        if (!s.ok()) return s.status();
        slices.push_back(*std::move(s));
        return absl::OkStatus();
      };
      if (absl::Status s = add(slot.name, master.to(param_dtypes_[i])); !s.ok()) return s;
      if (param_dtypes_[i] != torch::kFloat) {
        if (absl::Status s = add("optimizer.master." + slot.name, master); !s.ok()) return s;
      }
      auto it = optimizer_->state().find(OptimizerStateKey(master));
      if (it == optimizer_->state().end()) continue;
      if (auto* adam = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get())) {
        if (absl::Status s = add("optimizer.exp_avg." + slot.name, adam->exp_avg()); !s.ok()) return s;
        if (absl::Status s = add("optimizer.exp_avg_sq." + slot.name, adam->exp_avg_sq()); !s.ok()) return s;
      } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(it->second.get())) {
        if (absl::Status s = add("optimizer.momentum." + slot.name, sgd->momentum_buffer()); !s.ok()) return s;
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("saving the parameter shard failed: ", e.what()));
  }
  return SerializeShardFile(slices);
}

absl::Status Trainer::LoadShard(const ShardedTensorReader& reader, int64_t step) {
  const ExpertSpan experts{local_experts_.first, local_experts_.second, num_experts_};
  const ShardLayout& layout = sync_->layout();
  const std::vector<torch::Tensor>& opt = sync_->OptimizerParams();
  const std::map<std::string, GlobalTensorInfo> infos = InfosOf(reader);
  auto has = [&](const std::string& name) { return infos.count(name) > 0; };
  try {
    for (size_t i = 0; i < opt.size(); ++i) {
      // Whole tensors (stage 0) read every element; shards their owned range.
      ParamSlot slot = layout.params[i];
      if (opt[i].numel() == slot.numel) {
        slot.owned_begin = 0;
        slot.owned_end = slot.numel;
      }
      // A tied copy (a last pipeline stage's lm_head.weight) saved by a layout without it reads
      // its original: the two are bitwise equal, optimizer states included.
      if (!slot.tied_to.empty() && !has(slot.name) && !has("optimizer.master." + slot.name)) {
        slot.name = slot.tied_to;
      }
      const std::string master = "optimizer.master." + slot.name;
      const std::string source = has(master) ? master : slot.name;
      if (!has(source)) return absl::DataLossError(absl::StrCat(reader.dir(), ": no tensor ", slot.name));
      const TpPlacement tp = PlaceTp(slot, shapes_[i], TpRank(), TpSize(), experts);
      // Routed experts are stored with all of them, whatever this run's expert-parallel degree.
      std::vector<int64_t> stored_local = shapes_[i];
      if (slot.routed_expert && experts.Split()) stored_local[0] = experts.total;
      absl::StatusOr<TpSource> from = MatchTp(reader.dir(), infos.at(source), tp, slot, stored_local, TpSize());
      if (!from.ok()) return from.status();
      // Saved under another tensor-parallel degree: whole, merged, sliced again; else the range.
      ParamSlot range = slot;
      range.owned_begin += tp.offset;
      range.owned_end += tp.offset;
      auto read = [&](const std::string& name, const std::string& dtype, torch::Tensor target) {
        if (!from->reshard) return ReadInto(reader, name, dtype, range, target);
        if (!has(name)) return absl::DataLossError(absl::StrCat(reader.dir(), ": no tensor ", name));
        GlobalTensorInfo info = infos.at(name);
        return ReadResharded(reader, info, dtype, *from, slot, TpRank(), TpSize(), experts, target);
      };
      if (absl::Status s = read(source, infos.at(source).dtype, opt[i]); !s.ok()) return s;
      const std::string exp_avg = "optimizer.exp_avg." + slot.name;
      const std::string momentum = "optimizer.momentum." + slot.name;
      if (options_.optimizer == OptimizerKind::kAdamW && has(exp_avg)) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(step);
        state->exp_avg(torch::zeros_like(opt[i]));
        state->exp_avg_sq(torch::zeros_like(opt[i]));
        if (absl::Status s = read(exp_avg, "F32", state->exp_avg()); !s.ok()) return s;
        const std::string sq = "optimizer.exp_avg_sq." + slot.name;
        if (absl::Status s = read(sq, "F32", state->exp_avg_sq()); !s.ok()) return s;
        optimizer_->state()[OptimizerStateKey(opt[i])] = std::move(state);
      } else if (options_.optimizer == OptimizerKind::kSgd && has(momentum)) {
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(torch::zeros_like(opt[i]));
        if (absl::Status s = read(momentum, "F32", state->momentum_buffer()); !s.ok()) return s;
        optimizer_->state()[OptimizerStateKey(opt[i])] = std::move(state);
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("restoring the parameter shard failed: ", e.what()));
  }
  // The module's parameters follow the restored optimizer tensors.
  return sync_->AfterOptimizerStep();
}

}  // namespace accel::exec
