#include "executor/models/pretrained_init.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "executor/checkpoint/torch_tensors.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/tp_layout.h"

namespace accel::exec {
namespace {

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

// The selection of the whole checkpoint tensor that covers local rows [first_row, end_row) of a
// tp-local slice: tensor-parallel rank `rank`'s slice (TpSelection) restricted to those rows.
// `whole` is the whole parameter's shape.
TensorSelection RowsOfSlice(const PretrainedPart& part, const std::vector<int64_t>& whole, int64_t first_row,
                            int64_t end_row) {
  const int64_t split_extent = part.split.dim >= 0 ? whole[part.split.dim] : 0;
  const TensorSelection slice =
      TpSelection({part.split.dim, part.split.parts}, split_extent, part.tp_rank, part.tp_size);
  if (slice.dim >= 1) {
    TensorSelection out = slice;
    out.rows = {first_row, end_row};
    return out;
  }
  TensorSelection out;
  out.dim = 0;
  if (slice.dim < 0) {
    out.ranges.emplace_back(first_row, end_row);
    return out;
  }
  // Rows split over the group: local row i is the i-th index of the slice's ranges, in order.
  int64_t local = 0;
  for (const auto& [begin, end] : slice.ranges) {
    const int64_t from = std::max(first_row, local), to = std::min(end_row, local + (end - begin));
    if (from < to) out.ranges.emplace_back(begin + (from - local), begin + (to - local));
    local += end - begin;
  }
  return out;
}

}  // namespace

absl::Status ReadPretrainedPart(PretrainedCheckpoint& checkpoint, const std::string& path,
                                const std::string& name, const PretrainedPart& part, at::Tensor target) {
  const PretrainedTensor* t = FindPretrained(checkpoint.index(), name);
  if (t == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the checkpoint has no tensor ", name));
  }
  const bool split = part.split.dim >= 0 && part.tp_size > 1;
  // The whole parameter's shape: the slice grown back along the split dim.
  std::vector<int64_t> whole = part.local;
  if (split) whole[part.split.dim] *= part.tp_size;
  // Fewer checkpoint rows (a padded vocabulary) are cut from this rank's slice only where the
  // rows are not split into several blocks.
  const bool fits = split && part.split.dim == 0 && part.split.parts > 1
                        ? at::IntArrayRef(t->shape) == at::IntArrayRef(whole)
                        : Fits(t->shape, whole);
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": tensor ", name, " has shape ", ShapeText(t->shape),
                                                   ", the model has ", ShapeText(whole)));
  }
  if (part.end <= part.begin) return absl::OkStatus();
  // Rows of the slice: Π local[1:] elements each (single elements of a vector; a scalar is read whole).
  int64_t row = 1;
  for (size_t d = 1; d < part.local.size(); ++d) row *= part.local[d];
  const int64_t first_row = part.begin / row, end_row = (part.end + row - 1) / row;
  const TensorSelection selection =
      part.local.empty() ? TensorSelection{} : RowsOfSlice(part, whole, first_row, end_row);
  absl::StatusOr<SafetensorsTensor> read = checkpoint.Read(name, *t, selection);
  if (!read.ok()) return read.status();
  absl::StatusOr<at::Tensor> values = SafetensorsToTensor(*read);
  if (!values.ok()) return values.status();
  // The rows read are the slice's rows from first_row on; a shorter checkpoint lacks a suffix.
  const at::Tensor flat = values->reshape({-1});
  const int64_t first = first_row * row;
  const int64_t stop = std::min(part.end, first + flat.numel());
  if (stop <= part.begin) return absl::OkStatus();
  torch::NoGradGuard no_grad;
  target.view({-1}).narrow(0, 0, stop - part.begin)
      .copy_(flat.narrow(0, part.begin - first, stop - part.begin).to(target.scalar_type()));
  return absl::OkStatus();
}

absl::Status ReadPretrainedParameter(PretrainedCheckpoint& checkpoint, const std::string& path,
                                     const std::string& name, const PretrainedPart& part,
                                     const PretrainedNames& names, at::Tensor target) {
  const std::optional<GroupedExpertName> grouped = ParseGroupedExpert(name);
  if (!grouped || part.local.size() < 2) {
    return ReadPretrainedPart(checkpoint, path, HuggingFaceName(name, names.naming), part, target);
  }
  // Expert i of the grouped tensor is Hugging Face's tensor of expert first_expert + i: the
  // grouped dims less dim 0, split over tp along the same dim less one.
  PretrainedPart expert = part;
  expert.local.assign(part.local.begin() + 1, part.local.end());
  if (expert.split.dim >= 0) expert.split.dim -= 1;
  int64_t n = 1;
  for (int64_t d : expert.local) n *= d;
  const at::Tensor flat = target.view({-1});
  for (int64_t i = 0; i < part.local[0]; ++i) {
    const int64_t begin = std::max(part.begin, i * n), end = std::min(part.end, (i + 1) * n);
    if (begin >= end) continue;
    expert.begin = begin - i * n;
    expert.end = end - i * n;
    const std::string hf = PerExpertName(*grouped, names.first_expert + i, names.naming);
    ACCEL_RETURN_IF_ERROR(
        ReadPretrainedPart(checkpoint, path, hf, expert, flat.narrow(0, begin - part.begin, end - begin)));
  }
  return absl::OkStatus();
}

PretrainedNames PretrainedNamesOf(const CausalLm& model) {
  return {ExpertNamingOf(model.config().moe.hf_model_type), model.LocalExperts().first};
}

absl::Status LoadPretrained(CausalLm& model, const std::string& path, PretrainedReadStats* stats) {
  absl::StatusOr<PretrainedCheckpoint> checkpoint = PretrainedCheckpoint::Open(path);
  if (!checkpoint.ok()) return checkpoint.status();
  const TensorParallel tp = model.tensor_parallel();
  const PretrainedNames names = PretrainedNamesOf(model);
  for (auto& item : model.named_parameters()) {
    at::Tensor& param = item.value();
    PretrainedPart part;
    part.local.assign(param.sizes().begin(), param.sizes().end());
    part.split = tp.enabled() ? model.TensorParallelSplit(item.key()) : TpSplit{};
    // A slice held by several ranks (replicated key/value heads) reads as one of tp / R slices.
    part.tp_rank = tp.enabled() ? tp.rank() / part.split.replicas : 0;
    part.tp_size = tp.enabled() ? tp.size() / part.split.replicas : 1;
    part.end = param.numel();
    absl::Status read =
        ReadPretrainedParameter(*checkpoint, path, SourceName(model, item.key()), part, names, param);
    if (!read.ok()) return read;
  }
  if (stats != nullptr) *stats = checkpoint->stats();
  return absl::OkStatus();
}

}  // namespace accel::exec
