#include "executor/checkpoint/torch_tensors.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <bit>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accel::exec {
namespace {

// safetensors is little-endian; copying raw tensor memory is correct only on such hosts.
static_assert(std::endian::native == std::endian::little, "accel checkpoints assume a little-endian host");

const std::vector<std::pair<at::ScalarType, std::string>>& DtypeTable() {
  static const auto* table = new std::vector<std::pair<at::ScalarType, std::string>>{
      {at::kDouble, "F64"}, {at::kFloat, "F32"}, {at::kHalf, "F16"}, {at::kBFloat16, "BF16"},
      {at::kLong, "I64"},   {at::kInt, "I32"},   {at::kShort, "I16"}, {at::kChar, "I8"},
      {at::kByte, "U8"},    {at::kBool, "BOOL"}};
  return *table;
}

std::string Shape(at::IntArrayRef shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

}  // namespace

absl::StatusOr<SafetensorsTensor> TensorToSafetensors(const std::string& name, const at::Tensor& tensor) {
  SafetensorsTensor record;
  record.name = name;
  for (const auto& [type, dtype] : DtypeTable()) {
    if (type == tensor.scalar_type()) record.dtype = dtype;
  }
  if (record.dtype.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": dtype ", c10::toString(tensor.scalar_type()), " has no safetensors encoding"));
  }
  at::Tensor cpu = tensor.detach().to(at::kCPU).contiguous();
  record.shape.assign(cpu.sizes().begin(), cpu.sizes().end());
  record.data.assign(static_cast<const char*>(cpu.data_ptr()), cpu.numel() * cpu.element_size());
  return record;
}

absl::StatusOr<at::Tensor> SafetensorsToTensor(const SafetensorsTensor& record) {
  for (const auto& [type, dtype] : DtypeTable()) {
    if (dtype != record.dtype) continue;
    at::Tensor t = at::empty(record.shape, at::TensorOptions().dtype(type));
    if (static_cast<size_t>(t.numel() * t.element_size()) != record.data.size()) {
      return absl::InvalidArgumentError(absl::StrCat(record.name, ": ", record.data.size(),
                                                     " bytes do not fill shape ", Shape(t.sizes())));
    }
    if (!record.data.empty()) std::memcpy(t.data_ptr(), record.data.data(), record.data.size());
    return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(record.name, ": dtype ", record.dtype, " is not supported"));
}

absl::Status LoadInto(const SafetensorsFile& file, const std::vector<std::pair<std::string, at::Tensor>>& targets,
                      const std::string& source) {
  std::map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : file.tensors) by_name[t.name] = &t;
  if (by_name.size() != file.tensors.size()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": duplicate tensor names"));
  }
  std::map<std::string, bool> wanted;
  for (const auto& [name, target] : targets) wanted[name] = true;
  for (const auto& [name, record] : by_name) {
    if (!wanted.count(name)) return absl::InvalidArgumentError(absl::StrCat(source, ": unexpected tensor ", name));
  }
  try {
    c10::AutoGradMode no_grad(false);
    for (const auto& [name, target] : targets) {
      auto it = by_name.find(name);
      if (it == by_name.end()) return absl::NotFoundError(absl::StrCat(source, ": missing tensor ", name));
      absl::StatusOr<at::Tensor> value = SafetensorsToTensor(*it->second);
      if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(source, ": ", value.status().message()));
      if (value->sizes() != target.sizes()) {
        return absl::InvalidArgumentError(absl::StrCat(source, ": ", name, " has shape ", Shape(value->sizes()),
                                                       ", expected ", Shape(target.sizes())));
      }
      at::Tensor dst = target;
      dst.copy_(*value);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(source, ": loading tensors failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
