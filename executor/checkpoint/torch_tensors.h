// Conversion between LibTorch tensors and safetensors records (checkpoint/safetensors.h).
#ifndef ACCEL_EXECUTOR_CHECKPOINT_TORCH_TENSORS_H_
#define ACCEL_EXECUTOR_CHECKPOINT_TORCH_TENSORS_H_

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/safetensors.h"

namespace accel::exec {

// Copies tensor (any device, any strides) into a record: dtype float64/32/16, bfloat16,
// int64/32/16/8, uint8 or bool map to F64/F32/F16/BF16/I64/I32/I16/I8/U8/BOOL. Errors:
// InvalidArgument for other dtypes (complex, quantized).
absl::StatusOr<SafetensorsTensor> TensorToSafetensors(const std::string& name, const at::Tensor& tensor);

// A new CPU tensor holding the record's data. Errors: InvalidArgument for dtypes LibTorch lacks
// (U16/U32/U64) or a size mismatch.
absl::StatusOr<at::Tensor> SafetensorsToTensor(const SafetensorsTensor& record);

// Copies the values of a file's tensors into targets (name -> tensor, e.g. a model's
// named_parameters()), casting dtype and moving device as needed, under no-grad.
// Errors: NotFound "SOURCE: missing tensor NAME" / InvalidArgument "SOURCE: NAME has shape [..],
// expected [..]" / InvalidArgument "SOURCE: unexpected tensor NAME" when the names differ.
absl::Status LoadInto(const SafetensorsFile& file, const std::vector<std::pair<std::string, at::Tensor>>& targets,
                      const std::string& source);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINT_TORCH_TENSORS_H_
