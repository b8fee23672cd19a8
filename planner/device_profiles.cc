#include "planner/device_profiles.h"

#include <algorithm>
#include <cctype>

#include "ir/enum_names.h"

namespace accel::planner {
namespace {

constexpr const char* kLatencySource =
    "latency assumed of the order of NCCL's tuning model (src/graph/tuning.cc)";
constexpr const char* kGpuEfficiency =
    "efficiency assumed: matmul 0.6, memory 0.8, link 0.8 of peak";

struct Builtin {
  const char* name;
  const char* source;
  double fp32, bf16, fp16, memory, intra_bw, intra_lat, inter_bw, inter_lat;
  double matmul_eff, memory_eff, link_eff;
  // Sharding offload: host link per direction per device and host DRAM bandwidth per device
  // (node DRAM / 8 GPUs); 0 on cpu, whose memory is the host's (ir::DeviceProfile).
  double host_link, host_memory;
};

const Builtin kBuiltins[] = {
    {"cpu",
     "accel assumption for one x86-64 core per worker: AVX2 2 FMA/cycle x 8 fp32 lanes x 2 FLOP "
     "x 3 GHz (Intel 64 and IA-32 Architectures Optimization Reference Manual); bf16/fp16 "
     "emulated at 1/4; 10 GB/s memory; Gloo over loopback TCP 2 GB/s, 50 us; efficiency 1. "
     "Not a datasheet device: run accel calibrate",
     96e9, 24e9, 24e9, 10e9, 2e9, 50e-6, 1e9, 100e-6, 1.0, 1.0, 1.0, 0, 0},
    {"a100",
     "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB): fp32 19.5 TFLOP/s, bf16/fp16 312 "
     "TFLOP/s dense, HBM2e 2,039 GB/s, NVLink 600 GB/s (300 GB/s per direction); DGX A100 "
     "datasheet: HDR InfiniBand 200 Gb/s per GPU, host 2x AMD EPYC 7742 (AMD datasheet: 8 "
     "channels DDR4-3200, 204.8 GB/s per socket, so 51.2 GB/s per GPU); A100 datasheet: PCIe "
     "Gen4 64 GB/s (32 GB/s per direction) to the host",
     19.5e12, 312e12, 312e12, 2039e9, 300e9, 5e-6, 25e9, 10e-6, 0.6, 0.8, 0.8, 32e9, 51.2e9},
    {"h100",
     "NVIDIA H100 Tensor Core GPU datasheet (SXM5): fp32 67 TFLOP/s, bf16/fp16 989.4 TFLOP/s "
     "dense, HBM3 3.35 TB/s, NVLink 900 GB/s (450 GB/s per direction); DGX H100 datasheet: NDR "
     "InfiniBand 400 Gb/s per GPU, host 2x Intel Xeon Platinum 8480C (Intel ARK: 8 channels "
     "DDR5-4800, 307.2 GB/s per socket, so 76.8 GB/s per GPU); PCIe Gen5 128 GB/s (64 GB/s per "
     "direction) to the host",
     67e12, 989.4e12, 989.4e12, 3350e9, 450e9, 5e-6, 50e9, 10e-6, 0.6, 0.8, 0.8, 64e9, 76.8e9},
    {"h200",
     "NVIDIA H200 Tensor Core GPU datasheet (SXM): fp32 67 TFLOP/s, bf16/fp16 989.4 TFLOP/s "
     "dense, HBM3e 4.8 TB/s, NVLink 900 GB/s (450 GB/s per direction); NDR InfiniBand 400 Gb/s "
     "per GPU; DGX H200 host 2x Intel Xeon Platinum 8480C (Intel ARK: 8 channels DDR5-4800, "
     "307.2 GB/s per socket, so 76.8 GB/s per GPU); PCIe Gen5 128 GB/s (64 GB/s per direction) "
     "to the host",
     67e12, 989.4e12, 989.4e12, 4800e9, 450e9, 5e-6, 50e9, 10e-6, 0.6, 0.8, 0.8, 64e9, 76.8e9},
};

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::optional<ir::DeviceProfile> BuiltinDeviceProfile(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (name != b.name) continue;
    ir::DeviceProfile p;
    p.set_name(b.name);
    std::string source = b.source;
    if (std::string_view(b.name) != "cpu") {
      source += std::string("; ") + kLatencySource + "; " + kGpuEfficiency;
    }
    p.set_source(source);
    p.set_matmul_fp32_flops_per_second(b.fp32);
    p.set_matmul_bf16_flops_per_second(b.bf16);
    p.set_matmul_fp16_flops_per_second(b.fp16);
    p.set_memory_bytes_per_second(b.memory);
    p.set_intra_node_bytes_per_second(b.intra_bw);
    p.set_intra_node_latency_seconds(b.intra_lat);
    p.set_inter_node_bytes_per_second(b.inter_bw);
    p.set_inter_node_latency_seconds(b.inter_lat);
    p.set_matmul_efficiency(b.matmul_eff);
    p.set_memory_efficiency(b.memory_eff);
    p.set_link_efficiency(b.link_eff);
    p.set_host_link_bytes_per_second(b.host_link);
    p.set_host_memory_bytes_per_second(b.host_memory);
    return p;
  }
  return std::nullopt;
}

const std::vector<std::string>& BuiltinDeviceProfileNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Builtin& b : kBuiltins) n.emplace_back(b.name);
    return n;
  }();
  return names;
}

std::string DefaultDeviceProfileName(ir::DeviceType device_type, std::string_view device_model) {
  if (device_type == ir::DEVICE_TYPE_CPU) return "cpu";
  const std::string model = Lower(device_model);
  for (const char* name : {"h200", "h100", "a100"}) {
    if (model.find(name) != std::string::npos) return name;
  }
  return "h100";
}

ir::DeviceProfile DeviceProfileFromValues(const spec::DeviceProfileValues& v,
                                          const std::string& file) {
  ir::DeviceProfile p;
  p.set_name(v.name);
  p.set_source(v.source);
  p.set_file(file);
  p.set_matmul_fp32_flops_per_second(v.matmul_fp32_flops_per_second);
  p.set_matmul_bf16_flops_per_second(v.matmul_bf16_flops_per_second);
  p.set_matmul_fp16_flops_per_second(v.matmul_fp16_flops_per_second);
  p.set_memory_bytes_per_second(v.memory_bytes_per_second);
  p.set_intra_node_bytes_per_second(v.intra_node_bytes_per_second);
  p.set_intra_node_latency_seconds(v.intra_node_latency_seconds);
  p.set_inter_node_bytes_per_second(v.inter_node_bytes_per_second);
  p.set_inter_node_latency_seconds(v.inter_node_latency_seconds);
  p.set_matmul_efficiency(v.matmul_efficiency);
  p.set_memory_efficiency(v.memory_efficiency);
  p.set_link_efficiency(v.link_efficiency);
  p.set_shared_cores_per_node(v.shared_cores_per_node);
  p.set_blocking_collective_seconds(v.blocking_collective_seconds);
  p.set_adamw_seconds_per_parameter(v.adamw_seconds_per_parameter);
  p.set_shared_core_bucket_overlap(v.shared_core_bucket_overlap);
  for (const spec::MatmulGridValues& g : v.matmul_grids) {
    ir::MatmulGrid* grid = p.add_matmul_grids();
    // The loader accepts only the three dtype names (spec/device_profile_file.cc).
    grid->set_dtype(ir::ParseDtype(g.dtype).value_or(ir::DTYPE_UNSPECIFIED));
    grid->set_layout(ir::ParseMatmulLayout(g.layout).value_or(ir::MATMUL_LAYOUT_NN));
    for (int64_t size : g.sizes) grid->add_sizes(size);
    for (double f : g.flops_per_second) grid->add_flops_per_second(f);
  }
  for (const spec::ElementwiseCostValues& c : v.elementwise_costs) {
    ir::ElementwiseCost* cost = p.add_elementwise_costs();
    cost->set_op(c.op);
    cost->set_dtype(ir::ParseDtype(c.dtype).value_or(ir::DTYPE_UNSPECIFIED));
    cost->set_forward_seconds_per_element(c.forward_seconds_per_element);
    cost->set_backward_seconds_per_element(c.backward_seconds_per_element);
  }
  for (const spec::WorkerScalingValues& w : v.worker_scaling) {
    ir::WorkerScaling* scaling = p.add_worker_scaling();
    scaling->set_workers_per_node(w.workers_per_node);
    scaling->set_efficiency(w.efficiency);
  }
  return p;
}

double MatmulPeakFlopsPerSecond(const ir::DeviceProfile& profile, ir::Dtype dtype) {
  if (dtype == ir::DTYPE_BF16) return profile.matmul_bf16_flops_per_second();
  if (dtype == ir::DTYPE_FP16) return profile.matmul_fp16_flops_per_second();
  return profile.matmul_fp32_flops_per_second();
}

}  // namespace accel::planner
