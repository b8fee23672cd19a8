// A trainer started from Hugging Face weights: each rank reads the ranges it owns into its
// optimizer tensors and publishes the parameters, as the resume from a sharded checkpoint does
// (sharded_state.cc), so under ZeRO no rank reads the whole model.
#include <torch/torch.h>

#include "executor/models/pretrained_init.h"
#include "executor/train/trainer.h"

namespace accel::exec {

absl::Status Trainer::LoadPretrained(const std::string& path, PretrainedReadStats* stats) {
  absl::StatusOr<PretrainedCheckpoint> checkpoint = PretrainedCheckpoint::Open(path);
  if (!checkpoint.ok()) return checkpoint.status();
  const ShardLayout& layout = sync_->layout();
  const std::vector<torch::Tensor>& opt = sync_->OptimizerParams();
  auto* model = dynamic_cast<CausalLm*>(module_.get());
  const PretrainedNames names = model != nullptr ? PretrainedNamesOf(*model) : PretrainedNames{};
  try {
    for (size_t i = 0; i < opt.size(); ++i) {
      const ParamSlot& slot = layout.params[i];
      PretrainedPart part;
      part.local = shapes_[i];
      part.split = slot.tp_split ? TpSplit{slot.tp_dim, slot.tp_parts} : TpSplit{};
      part.tp_rank = TpRank();
      part.tp_size = TpSize();
      // Whole optimizer tensors (stage 0) take every element; shards their owned range.
      const bool whole = opt[i].numel() == slot.numel;
      part.begin = whole ? 0 : slot.owned_begin;
      part.end = whole ? slot.numel : slot.owned_end;
      const std::string& source = slot.tied_to.empty() ? slot.name : slot.tied_to;
      if (absl::Status s = ReadPretrainedParameter(*checkpoint, path, source, part, names, opt[i]); !s.ok()) {
        return s;
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("loading ", path, " failed: ", e.what()));
  }
  if (stats != nullptr) *stats = checkpoint->stats();
  return sync_->AfterOptimizerStep();
}

}  // namespace accel::exec
