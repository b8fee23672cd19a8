#include "executor/models/pretrained_init.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/checkpoint/tp_layout.h"

namespace accel::exec {
namespace {

std::string ShapeText(at::IntArrayRef shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

// Whether a checkpoint tensor of shape `from` fits a whole parameter of shape `to`: the same
// shape, or fewer rows (dim 0) and the same other dims.
bool Fits(at::IntArrayRef from, at::IntArrayRef to) {
  if (from.size() != to.size()) return false;
  if (from.empty()) return true;
  if (from[0] > to[0]) return false;
  for (size_t d = 1; d < from.size(); ++d) {
    if (from[d] != to[d]) return false;
  }
  return true;
}

// The checkpoint tensor a parameter of `model` starts from: its own name, except for the copy of
// a tied head that a last pipeline stage keeps (the whole model has no lm_head.weight then).
std::string SourceName(const CausalLm& model, const std::string& name) {
  const bool tied = model.config().arch == ModelArch::kGpt2 || model.config().tie_embeddings;
  return tied && name == "lm_head.weight" ? model.WordEmbeddingName() : name;
}

}  // namespace

absl::Status LoadPretrained(CausalLm& model, const std::string& path, PretrainedReadStats* stats) {
  absl::StatusOr<PretrainedCheckpoint> checkpoint = PretrainedCheckpoint::Open(path);
  if (!checkpoint.ok()) return checkpoint.status();
  const TensorParallel tp = model.tensor_parallel();
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    const std::string name = SourceName(model, item.key());
    const PretrainedTensor* t = FindPretrained(checkpoint->index(), name);
    if (t == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": the checkpoint has no tensor ", name));
    }
    at::Tensor& param = item.value();
    const TpSplit split = tp.enabled() ? model.TensorParallelSplit(item.key()) : TpSplit{};
    // The whole parameter's shape: the slice grown back along the split dim.
    std::vector<int64_t> whole(param.sizes().begin(), param.sizes().end());
    if (split.dim >= 0) whole[split.dim] *= tp.size();
    // Fewer checkpoint rows (a padded vocabulary) are cut from this rank's slice only where the
    // rows are not split into several blocks.
    const bool fits = split.dim == 0 && split.parts > 1 ? at::IntArrayRef(t->shape) == at::IntArrayRef(whole)
                                                        : Fits(t->shape, whole);
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor ", name, " has shape ",
                                                     ShapeText(t->shape), ", the model has ",
                                                     ShapeText(whole)));
    }
    const TensorSelection selection =
        TpSelection({split.dim, split.parts}, split.dim >= 0 ? whole[split.dim] : 0, tp.rank(), tp.size());
    absl::StatusOr<SafetensorsTensor> part = checkpoint->Read(name, *t, selection);
    if (!part.ok()) return part.status();
    absl::StatusOr<at::Tensor> values = SafetensorsToTensor(*part);
    if (!values.ok()) return values.status();
    at::Tensor target = values->dim() == 0 ? param : param.narrow(0, 0, values->size(0));
    target.copy_(values->to(param.scalar_type()));
  }
  if (stats != nullptr) *stats = checkpoint->stats();
  return absl::OkStatus();
}

}  // namespace accel::exec
