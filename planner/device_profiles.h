#ifndef ACCEL_PLANNER_DEVICE_PROFILES_H_
#define ACCEL_PLANNER_DEVICE_PROFILES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/plan.pb.h"
#include "spec/device_profile_file.h"

// Device profiles for the step-time estimate (ir::DeviceProfile): matmul peaks per dtype,
// memory bandwidth, link bandwidth and latency within and across nodes, and the achievable
// fractions of those peaks, stated as fields rather than folded into the peaks.
namespace accel::planner {

// The built-in profile `name` ("cpu", "a100", "h100", "h200"), or nullopt. GPU peaks are the
// dense (no sparsity) figures of NVIDIA's datasheets, named in `source`:
// - a100 (A100 SXM4 80GB datasheet, 2021): fp32 19.5 TFLOP/s (PyTorch keeps TF32 off for
//   matmuls by default since 1.12), bf16/fp16 312 TFLOP/s, HBM2e 2,039 GB/s, NVLink 3 600 GB/s
//   total = 300 GB/s per direction, HDR InfiniBand 200 Gb/s = 25 GB/s per GPU (DGX A100).
// - h100 (H100 SXM5 datasheet): fp32 67 TFLOP/s, bf16/fp16 989.4 TFLOP/s, HBM3 3.35 TB/s,
//   NVLink 4 900 GB/s total = 450 GB/s per direction, NDR 400 Gb/s = 50 GB/s per GPU (DGX H100).
// - h200 (H200 SXM datasheet): as h100 with HBM3e 4.8 TB/s.
// - Host side, for sharding offload: PCIe to the host per direction per GPU (A100 datasheet
//   PCIe Gen4 64 GB/s = 32 GB/s per direction; H100/H200 PCIe Gen5 128 GB/s = 64 GB/s) and
//   host DRAM bandwidth per GPU of the DGX host (DGX A100: 2 × AMD EPYC 7742, 8 × DDR4-3200
//   channels each = 409.6 GB/s / 8 GPUs = 51.2 GB/s; DGX H100/H200: 2 × Xeon Platinum 8480C,
//   8 × DDR5-4800 each = 614.4 GB/s / 8 = 76.8 GB/s). cpu: 0 (its memory is the host's).
// - cpu: one worker process on one x86-64 core, not a datasheet device: AVX2 2 FMA/cycle ×
//   8 fp32 lanes × 2 FLOP × 3 GHz = 96 GFLOP/s (Intel optimization manual), bf16/fp16 without
//   AMX emulated at a quarter of that, 10 GB/s memory per core, loopback TCP (Gloo) 2 GB/s at
//   50 µs. Run `accel calibrate` for real figures.
// Latencies are assumptions of the order of NCCL's tuning model (src/graph/tuning.cc): 5 µs
// over NVLink, 10 µs over InfiniBand. Efficiencies: matmul 0.6, memory 0.8, link 0.8 for GPUs
// (assumed fractions of peak, typical of large GEMMs and NCCL bus bandwidth); 1 for cpu.
std::optional<ir::DeviceProfile> BuiltinDeviceProfile(std::string_view name);

// Built-in profile names in documentation order, for messages and "did you mean".
const std::vector<std::string>& BuiltinDeviceProfileNames();

// The built-in profile for a device when the spec names none: "cpu" for CPU; for CUDA the
// first of "h200", "h100", "a100" that `device_model` contains (case-insensitive), else "h100".
std::string DefaultDeviceProfileName(ir::DeviceType device_type, std::string_view device_model);

// A profile from a device-profile file's values; `file` is the path as written in the spec.
ir::DeviceProfile DeviceProfileFromValues(const spec::DeviceProfileValues& values,
                                          const std::string& file);

// The matmul peak of `profile` for a compute dtype, FLOP/s; fp32's for UNSPECIFIED.
double MatmulPeakFlopsPerSecond(const ir::DeviceProfile& profile, ir::Dtype dtype);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_DEVICE_PROFILES_H_
