#include "executor/models/pretrained_init.h"

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/checkpoint/pretrained.h"
#include "executor/checkpoint/torch_tensors.h"

namespace accel::exec {
namespace {

std::string ShapeText(at::IntArrayRef shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

// Whether `from` fits `to`: the same shape, or fewer rows (dim 0) and the same other dims.
bool Fits(const at::Tensor& from, const at::Tensor& to) {
  if (from.dim() != to.dim()) return false;
  if (from.dim() == 0) return true;
  if (from.size(0) > to.size(0)) return false;
  for (int64_t d = 1; d < from.dim(); ++d) {
    if (from.size(d) != to.size(d)) return false;
  }
  return true;
}

}  // namespace

absl::Status LoadPretrained(CausalLm& model, const std::string& path) {
  absl::StatusOr<PretrainedIndex> index = OpenPretrained(path);
  if (!index.ok()) return index.status();
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    const PretrainedTensor* t = FindPretrained(*index, item.key());
    if (t == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": the checkpoint has no tensor ", item.key()));
    }
    absl::StatusOr<std::string> bytes = ReadPretrainedBytes(*t);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<at::Tensor> values =
        SafetensorsToTensor(SafetensorsTensor{item.key(), t->dtype, t->shape, *std::move(bytes)});
    if (!values.ok()) return values.status();
    at::Tensor& param = item.value();
    if (!Fits(*values, param)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor ", item.key(), " has shape ",
                                                     ShapeText(values->sizes()), ", the model has ",
                                                     ShapeText(param.sizes())));
    }
    at::Tensor target = values->dim() == 0 ? param : param.narrow(0, 0, values->size(0));
    target.copy_(values->to(param.scalar_type()));
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
