// Trainer state of sharding stages 1–3 as flat ranges of global tensors (sharded_tensors.h):
// every rank writes the ranges it owns and reads the ranges its layout owns on resume, so a
// checkpoint saved on one layout (stage, degree) loads into another.
#include <torch/torch.h>
#include <torch/version.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "executor/checkpoint/sharded_tensors.h"
#include "executor/checkpoint/torch_tensors.h"
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
// shape and are written by tp rank 0 only.
struct TpPlacement {
  std::vector<int64_t> shape;
  int64_t offset = 0;
  bool writes = true;
};

TpPlacement PlaceTp(const ParamSlot& slot, const std::vector<int64_t>& local_shape,
                    int64_t tp_rank, int64_t tp_size) {
  TpPlacement out{local_shape, 0, true};
  if (tp_size <= 1) return out;
  if (!slot.tp_split) {
    out.writes = tp_rank == 0;
    return out;
  }
  out.shape.insert(out.shape.begin(), tp_size);
  out.offset = tp_rank * slot.numel;
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

// A checkpoint written under another tensor-parallel degree stores other slices.
absl::Status CheckTpShape(const std::string& dir, const GlobalTensorInfo& info, const TpPlacement& tp) {
  if (info.shape == tp.shape) return absl::OkStatus();
  const bool saved_split = info.shape.size() == tp.shape.size() + 1;
  const bool run_split = tp.shape.size() == info.shape.size() + 1;
  const int64_t saved = saved_split ? info.shape[0] : 1;
  const int64_t run = run_split ? tp.shape[0] : 1;
  if (saved != run && (saved_split || run_split)) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": tensor ", info.name, " was saved split over ", saved,
        " tensor-parallel rank(s) but this run has ", run,
        "; resuming under another tensor-parallel degree is not supported yet"));
  }
  return absl::InvalidArgumentError(absl::StrCat(dir, ": tensor ", info.name, " has shape ",
                                                 ShapeText(info.shape), " but this run expects ",
                                                 ShapeText(tp.shape)));
}

}  // namespace

absl::StatusOr<std::string> Trainer::SaveShard() const {
  std::vector<TensorSlice> slices;
  const ShardLayout& layout = sync_->layout();
  const std::vector<torch::Tensor>& opt = sync_->OptimizerParams();
  try {
    for (size_t i = 0; i < opt.size(); ++i) {
      const TpPlacement tp = PlaceTp(layout.params[i], shapes_[i], TpRank(), TpSize());
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
      const TpPlacement tp = PlaceTp(slot, shapes_[i], TpRank(), TpSize());
      if (absl::Status s = CheckTpShape(reader.dir(), infos.at(source), tp); !s.ok()) return s;
      slot.owned_begin += tp.offset;
      slot.owned_end += tp.offset;
      if (absl::Status s = ReadInto(reader, source, infos.at(source).dtype, slot, opt[i]); !s.ok()) return s;
      const std::string exp_avg = "optimizer.exp_avg." + slot.name;
      const std::string momentum = "optimizer.momentum." + slot.name;
      if (options_.optimizer == OptimizerKind::kAdamW && has(exp_avg)) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(step);
        state->exp_avg(torch::zeros_like(opt[i]));
        state->exp_avg_sq(torch::zeros_like(opt[i]));
        if (absl::Status s = ReadInto(reader, exp_avg, "F32", slot, state->exp_avg()); !s.ok()) return s;
        const std::string sq = "optimizer.exp_avg_sq." + slot.name;
        if (absl::Status s = ReadInto(reader, sq, "F32", slot, state->exp_avg_sq()); !s.ok()) return s;
        optimizer_->state()[OptimizerStateKey(opt[i])] = std::move(state);
      } else if (options_.optimizer == OptimizerKind::kSgd && has(momentum)) {
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(torch::zeros_like(opt[i]));
        if (absl::Status s = ReadInto(reader, momentum, "F32", slot, state->momentum_buffer()); !s.ok()) return s;
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
