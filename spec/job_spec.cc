#include "spec/job_spec.h"

namespace accel::spec {

FieldSource JobSpec::Locate(const std::string& path) const {
  std::string p = path;
  while (!p.empty()) {
    auto it = sources.find(p);
    if (it != sources.end() && (it->second.origin != Origin::kDefault)) return it->second;
    size_t dot = p.rfind('.');
    if (dot == std::string::npos) break;
    p.resize(dot);
  }
  FieldSource fallback;
  fallback.origin = Origin::kDefault;
  fallback.file = file;
  return fallback;
}

const char* Name(Arch v) { return v == Arch::kGpt2 ? "gpt2" : "llama"; }
const char* Name(DataFormat v) { return v == DataFormat::kText ? "text" : "tokens"; }
const char* Name(TokenDtype v) { return v == TokenDtype::kUint16 ? "uint16" : "uint32"; }
const char* Name(OptimizerName v) { return v == OptimizerName::kAdamW ? "adamw" : "sgd"; }
const char* Name(LrScheduleName v) {
  switch (v) {
    case LrScheduleName::kConstant: return "constant";
    case LrScheduleName::kLinear: return "linear";
    case LrScheduleName::kCosine: return "cosine";
  }
  return "cosine";
}
const char* Name(DType v) {
  switch (v) {
    case DType::kFp32: return "fp32";
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
  }
  return "fp32";
}
const char* Name(LossScaling v) {
  switch (v) {
    case LossScaling::kNone: return "none";
    case LossScaling::kDynamic: return "dynamic";
    case LossScaling::kStatic: return "static";
  }
  return "none";
}
const char* Name(PipelineSchedule v) {
  switch (v) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kInterleaved1F1B: return "interleaved_1f1b";
    case PipelineSchedule::kZbH1: return "zb_h1";
    case PipelineSchedule::kZbv: return "zbv";
    default: return "1f1b";
  }
}
const char* Name(Recompute v) {
  switch (v) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kOp: return "op";
    case Recompute::kFull: return "full";
  }
  return "none";
}
const char* Name(Offload v) {
  switch (v) {
    case Offload::kNone: return "none";
    case Offload::kOptimizer: return "optimizer";
    case Offload::kAll: return "all";
  }
  return "none";
}
const char* Name(DeviceType v) { return v == DeviceType::kCpu ? "cpu" : "cuda"; }
const char* Name(ResumeMode v) { return v == ResumeMode::kAuto ? "auto" : "never"; }
const char* Name(RouterScoring v) { return v == RouterScoring::kSoftmax ? "softmax" : "sigmoid"; }
const char* Name(ContextMethod v) { return v == ContextMethod::kRing ? "ring" : "ulysses"; }

}  // namespace accel::spec
