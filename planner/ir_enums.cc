#include "planner/ir_enums.h"

namespace accel::planner {

ir::Architecture ToIr(spec::Arch v) {
  return v == spec::Arch::kGpt2 ? ir::ARCHITECTURE_GPT2 : ir::ARCHITECTURE_LLAMA;
}

ir::DataFormat ToIr(spec::DataFormat v) {
  return v == spec::DataFormat::kText ? ir::DATA_FORMAT_TEXT : ir::DATA_FORMAT_TOKENS;
}

ir::TokenDtype ToIr(spec::TokenDtype v) {
  return v == spec::TokenDtype::kUint16 ? ir::TOKEN_DTYPE_UINT16 : ir::TOKEN_DTYPE_UINT32;
}

ir::OptimizerKind ToIr(spec::OptimizerName v) {
  return v == spec::OptimizerName::kAdamW ? ir::OPTIMIZER_KIND_ADAMW : ir::OPTIMIZER_KIND_SGD;
}

ir::LrScheduleKind ToIr(spec::LrScheduleName v) {
  switch (v) {
    case spec::LrScheduleName::kConstant: return ir::LR_SCHEDULE_KIND_CONSTANT;
    case spec::LrScheduleName::kLinear: return ir::LR_SCHEDULE_KIND_LINEAR;
    case spec::LrScheduleName::kCosine: return ir::LR_SCHEDULE_KIND_COSINE;
  }
  return ir::LR_SCHEDULE_KIND_UNSPECIFIED;
}

ir::Dtype ToIr(spec::DType v) {
  switch (v) {
    case spec::DType::kFp32: return ir::DTYPE_FP32;
    case spec::DType::kBf16: return ir::DTYPE_BF16;
    case spec::DType::kFp16: return ir::DTYPE_FP16;
  }
  return ir::DTYPE_UNSPECIFIED;
}

ir::LossScaling ToIr(spec::LossScaling v) {
  switch (v) {
    case spec::LossScaling::kNone: return ir::LOSS_SCALING_NONE;
    case spec::LossScaling::kDynamic: return ir::LOSS_SCALING_DYNAMIC;
    case spec::LossScaling::kStatic: return ir::LOSS_SCALING_STATIC;
  }
  return ir::LOSS_SCALING_UNSPECIFIED;
}

ir::PipelineSchedule ToIr(spec::PipelineSchedule v) {
  switch (v) {
    case spec::PipelineSchedule::kGpipe: return ir::PIPELINE_SCHEDULE_GPIPE;
    case spec::PipelineSchedule::k1F1B: return ir::PIPELINE_SCHEDULE_1F1B;
    case spec::PipelineSchedule::kInterleaved1F1B: return ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B;
  }
  return ir::PIPELINE_SCHEDULE_UNSPECIFIED;
}

ir::Recompute ToIr(spec::Recompute v) {
  switch (v) {
    case spec::Recompute::kNone: return ir::RECOMPUTE_NONE;
    case spec::Recompute::kSelective: return ir::RECOMPUTE_SELECTIVE;
    case spec::Recompute::kFull: return ir::RECOMPUTE_FULL;
  }
  return ir::RECOMPUTE_UNSPECIFIED;
}

ir::Offload ToIr(spec::Offload v) {
  switch (v) {
    case spec::Offload::kNone: return ir::OFFLOAD_NONE;
    case spec::Offload::kOptimizer: return ir::OFFLOAD_OPTIMIZER;
    case spec::Offload::kAll: return ir::OFFLOAD_ALL;
  }
  return ir::OFFLOAD_UNSPECIFIED;
}

ir::DeviceType ToIr(spec::DeviceType v) {
  return v == spec::DeviceType::kCuda ? ir::DEVICE_TYPE_CUDA : ir::DEVICE_TYPE_CPU;
}

ir::ResumePolicy ToIr(spec::ResumeMode v) {
  return v == spec::ResumeMode::kAuto ? ir::RESUME_POLICY_AUTO : ir::RESUME_POLICY_NEVER;
}

}  // namespace accel::planner
