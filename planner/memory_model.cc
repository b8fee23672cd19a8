#include "planner/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/ceil_div.h"
#include "absl/status/status.h"
#include "common/units.h"

namespace accel::planner {
namespace {


struct DeviceEntry {
  const char* name;
  int64_t mib;
};

// nvidia-smi memory.total in MiB: what the driver lets a process see, below the marketed
// capacity (ECC and firmware reservations), so "fits" is judged against what is usable.
constexpr DeviceEntry kDevices[] = {
    {"h100-80gb", 81559}, {"h100-94gb", 95830}, {"h200", 143771},   {"a100-80gb", 81920},
    {"a100-40gb", 40960}, {"l40s", 46068},      {"l4", 23034},      {"a10g", 23028},
    {"v100-32gb", 32510}, {"v100-16gb", 16160}, {"t4", 15360},
};

}  // namespace

absl::StatusOr<ModelStateDtypes> ModelStateDtypesFor(int64_t param_bytes,
                                                     ir::OptimizerKind optimizer,
                                                     double momentum) {
  ModelStateDtypes d;
  d.param_bytes = param_bytes;
  d.grad_bytes = param_bytes;
  d.master_bytes = param_bytes < 4 ? 4 : 0;
  d.grad_copy_bytes = param_bytes < 4 ? 4 : 0;
  if (optimizer == ir::OPTIMIZER_KIND_ADAMW) {
    d.optimizer_bytes = 8;
  } else if (optimizer == ir::OPTIMIZER_KIND_SGD) {
    d.optimizer_bytes = momentum != 0.0 ? 4 : 0;
  } else {
    return absl::InvalidArgumentError("unknown optimizer " + ir::OptimizerKind_Name(optimizer));
  }
  return d;
}

int64_t ShardedCount(int64_t count, int64_t degree) { return CeilDiv(count, degree); }

ModelStateBytes ModelStateBytesPerRank(int64_t params, const ModelStateDtypes& dtypes,
                                       int64_t stage, int64_t degree, spec::Offload offload) {
  const int64_t full = params;
  const int64_t shard = ShardedCount(params, degree);
  const int64_t optimizer_count = stage >= 1 ? shard : full;
  const int64_t grad_count = stage >= 2 ? shard : full;
  const int64_t param_count = stage >= 3 ? shard : full;

  ModelStateBytes b;
  const bool optimizer_on_host = offload != spec::Offload::kNone;
  const bool params_on_host = offload == spec::Offload::kAll;
  // accel's executor (executor/train/zero_sync.cc OwnedOptimizerTensor) and DeepSpeed's CPU Adam
  // keep an fp32 copy and an fp32 gradient on the host even for fp32 parameters.
  const bool host_fp32_copy = optimizer_on_host && dtypes.master_bytes == 0;
  const int64_t params_bytes = param_count * dtypes.param_bytes;
  const int64_t master = optimizer_count * (host_fp32_copy ? 4 : dtypes.master_bytes);
  const int64_t copy = optimizer_count * (host_fp32_copy ? 4 : dtypes.grad_copy_bytes);
  const int64_t optimizer = optimizer_count * dtypes.optimizer_bytes;
  // From stage 2 the executor reduces each bucket straight into the fp32 gradient the optimizer
  // steps with (its copy for 16-bit parameters, the host copy when offloaded): no separate
  // gradient shard in the parameter dtype is kept (zero_sync.cc GradShardSync::Finish).
  const bool shard_only_in_fp32_copy = stage >= 2 && (host_fp32_copy || dtypes.grad_copy_bytes > 0);
  b.gradients = shard_only_in_fp32_copy ? 0 : grad_count * dtypes.grad_bytes;
  (params_on_host ? b.host_parameters : b.parameters) = params_bytes;
  (optimizer_on_host ? b.host_master_weights : b.master_weights) = master;
  (optimizer_on_host ? b.host_gradient_copy : b.gradient_copy) = copy;
  (optimizer_on_host ? b.host_optimizer_states : b.optimizer_states) = optimizer;
  return b;
}

DeepSpeedEstimate DeepSpeedZero2Estimate(int64_t total_params, int64_t gpus_per_node,
                                         int64_t nodes, bool offload_optimizer,
                                         double buffer_factor) {
  const int64_t total_gpus = nodes * gpus_per_node;
  const double p = static_cast<double>(total_params);
  DeepSpeedEstimate e;
  if (offload_optimizer) {
    e.gpu_bytes = 2 * total_params;
    e.cpu_bytes = static_cast<int64_t>(
        p * static_cast<double>(std::max<int64_t>(4 * total_gpus, 16)) * buffer_factor);
  } else {
    // DeepSpeed computes int(18 * P / G) in floating point; P < 2^53 keeps it exact enough
    // that integer division gives the same floor.
    e.gpu_bytes = 2 * total_params + (18 * total_params) / total_gpus;
    e.cpu_bytes = static_cast<int64_t>(p * 4.0 * static_cast<double>(gpus_per_node) * buffer_factor);
  }
  return e;
}

DeepSpeedEstimate DeepSpeedZero3Estimate(int64_t total_params, int64_t largest_layer_params,
                                         int64_t gpus_per_node, int64_t nodes,
                                         bool offload_optimizer, bool offload_params,
                                         bool zero_init, double buffer_factor) {
  const int64_t total_gpus = nodes * gpus_per_node;
  const double p = static_cast<double>(total_params);
  const double gpus_factor = 1.0 / static_cast<double>(nodes);
  const double per_node = static_cast<double>(gpus_per_node);
  const int64_t largest_layer_memory = 4 * largest_layer_params;
  DeepSpeedEstimate e;
  if (offload_optimizer || offload_params) {
    if (offload_params) {
      e.gpu_bytes = largest_layer_memory;
      const double factor = zero_init ? 18.0 * gpus_factor : std::max(4.0 * per_node, 18.0 * gpus_factor);
      e.cpu_bytes = static_cast<int64_t>(p * factor * buffer_factor);
    } else {
      e.gpu_bytes = largest_layer_memory + (2 * total_params) / total_gpus;
      const double factor = zero_init ? 16.0 * gpus_factor : std::max(4.0 * per_node, 16.0 * gpus_factor);
      e.cpu_bytes = static_cast<int64_t>(p * factor * buffer_factor);
    }
  } else {
    e.gpu_bytes = largest_layer_memory + (18 * total_params) / total_gpus;
    const double init = zero_init ? static_cast<double>(largest_layer_params) : p;
    e.cpu_bytes = static_cast<int64_t>(init * 4.0 * per_node * buffer_factor);
  }
  return e;
}

std::string FormatGiB2(int64_t bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.2f", static_cast<double>(bytes) / static_cast<double>(kGiB));
  return buffer;
}

absl::StatusOr<std::vector<AccelerateRow>> AccelerateEstimateTable(
    int64_t fp32_total_bytes, int64_t fp32_largest_layer_bytes,
    const std::vector<std::string>& dtypes) {
  std::vector<AccelerateRow> rows;
  for (const std::string& dtype : dtypes) {
    double divisor = 0;
    if (dtype == "float32") divisor = 1;
    else if (dtype == "float16") divisor = 2;
    else if (dtype == "int8") divisor = 4;
    else if (dtype == "int4") divisor = 8;
    else return absl::InvalidArgumentError("unknown dtype '" + dtype +
                                           "' (expected float32, float16, int8 or int4)");
    AccelerateRow row;
    row.dtype = dtype;
    row.total_bytes = static_cast<double>(fp32_total_bytes) / divisor;
    row.largest_layer_bytes = static_cast<double>(fp32_largest_layer_bytes) / divisor;
    if (dtype == "float32") row.training_bytes = 4.0 * static_cast<double>(fp32_total_bytes);
    if (dtype == "float16") row.training_bytes = 2.0 * static_cast<double>(fp32_total_bytes);
    rows.push_back(row);
  }
  return rows;
}

std::string AccelerateFormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KB", "MB", "GB", "TB"};
  const char* unit = "PB";
  for (const char* u : kUnits) {
    if (bytes < 1024.0) {
      unit = u;
      break;
    }
    bytes /= 1024.0;
  }
  // round(x, 2) and Python's shortest float repr: two decimals, trailing zeros dropped but one
  // digit kept after the point.
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.2f", bytes);
  std::string text = buffer;
  while (text.size() > 2 && text.back() == '0' && text[text.size() - 2] != '.') text.pop_back();
  return text + " " + unit;
}

int64_t ActivationBytesPerLayer(const ActivationShape& shape, RecomputeMode recompute) {
  const int64_t s = shape.seq_len, b = shape.micro_batch, h = shape.hidden;
  const int64_t a = shape.heads, f = shape.ffn > 0 ? shape.ffn : 4 * h;
  const int64_t t = std::max<int64_t>(shape.tp, 1);
  const int64_t sbh = s * b * h;
  const int64_t input = shape.sequence_parallel ? CeilDiv(2 * sbh, t) : 2 * sbh;
  if (recompute == RecomputeMode::kFull) return input;
  // Per-op: the outputs kept in 16 bits, at most 4h + ffn per token (GPT-2's c_attn, attention and
  // c_fc; Llama's q, v, attention, gate and down are 3h + kv + ffn; planner/recompute_policy.h).
  if (recompute == RecomputeMode::kOp) return input + CeilDiv(2 * s * b * (4 * h + f), t);
  // Table 2's parts: 10·sbh outside the tensor-parallel regions (LayerNorm inputs, the inputs
  // of the QKV and first MLP matmuls, two dropout masks), 8·sbh + 4·s·b·f inside them (Q, K,
  // V, attention-output projection input; both MLP matmul inputs), 5·a·s²·b attention scores
  // (softmax output, dropout mask and output).
  const int64_t replicated = 10 * sbh;
  const int64_t parallel = 8 * sbh + 4 * s * b * f;
  const bool no_scores = recompute == RecomputeMode::kSelective || shape.fused_attention;
  const int64_t scores = no_scores ? 0 : 5 * a * s * s * b;
  if (shape.sequence_parallel) return CeilDiv(replicated + parallel + scores, t);
  return replicated + CeilDiv(parallel + scores, t);
}

int64_t LogitsBytes(int64_t seq_len, int64_t micro_batch, int64_t padded_vocab, int64_t tp,
                    int64_t compute_bytes) {
  const int64_t elements = seq_len * micro_batch * CeilDiv(padded_vocab, std::max<int64_t>(tp, 1));
  return elements * (4 + (compute_bytes < 4 ? compute_bytes : 0));
}

int64_t ReduceBucketBytes(int64_t bucket_elements, int64_t reduce_bytes) {
  return 2 * bucket_elements * reduce_bytes;
}

int64_t GatheredParameterBytes(int64_t largest_unit_elements, int64_t prefetch_bucket_elements,
                               int64_t param_bytes, int64_t grad_bytes) {
  return largest_unit_elements * (param_bytes + grad_bytes) + prefetch_bucket_elements * param_bytes;
}

int64_t DefaultRuntimeOverheadBytes(ir::DeviceType device_type) {
  if (device_type == ir::DEVICE_TYPE_CPU) return 256 * kMiB;
  return kGiB + kGiB / 2;
}

std::string RuntimeOverheadReason(ir::DeviceType device_type) {
  if (device_type == ir::DEVICE_TYPE_CPU) {
    return "default for cpu: 256 MiB for the process, Gloo buffers and the allocator";
  }
  return "default for cuda: 1.5 GiB for the CUDA context and cuBLAS/cuDNN/NCCL workspaces "
         "(0.5-2 GiB per GPU reported; docs/planner-facts.md section 7)";
}

int64_t AllocatorReserveBytes(int64_t other_device_bytes, ir::DeviceType device_type) {
  if (device_type == ir::DEVICE_TYPE_CPU) return 0;
  return static_cast<int64_t>(std::ceil(static_cast<double>(other_device_bytes) * kAllocatorReserveFraction));
}

std::optional<int64_t> DeviceMemoryBytes(std::string_view device_model) {
  for (const DeviceEntry& d : kDevices) {
    if (device_model == d.name) return d.mib * kMiB;
  }
  return std::nullopt;
}

const std::vector<std::string>& DeviceModelNames() {
  static const std::vector<std::string>* names = [] {
    auto* list = new std::vector<std::string>();
    for (const DeviceEntry& d : kDevices) list->push_back(d.name);
    return list;
  }();
  return *names;
}

}  // namespace accel::planner
