#include "ir/enum_names.h"

namespace accel::ir {
namespace {

constexpr std::string_view kUnspecified = "unspecified";

}  // namespace

std::string_view Name(Backend v) {
  switch (v) {
    case BACKEND_GLOO: return "gloo";
    case BACKEND_NCCL: return "nccl";
    default: return kUnspecified;
  }
}

std::string_view Name(Architecture v) {
  switch (v) {
    case ARCHITECTURE_GPT2: return "gpt2";
    case ARCHITECTURE_LLAMA: return "llama";
    default: return kUnspecified;
  }
}

std::string_view Name(DataFormat v) {
  switch (v) {
    case DATA_FORMAT_TEXT: return "text";
    case DATA_FORMAT_TOKENS: return "tokens";
    default: return kUnspecified;
  }
}

std::string_view Name(TokenizerKind v) {
  switch (v) {
    case TOKENIZER_KIND_BYTES: return "bytes";
    case TOKENIZER_KIND_HUGGINGFACE: return "huggingface";
    case TOKENIZER_KIND_SENTENCEPIECE: return "sentencepiece";
    default: return kUnspecified;
  }
}

std::string_view Name(TokenDtype v) {
  switch (v) {
    case TOKEN_DTYPE_UINT16: return "uint16";
    case TOKEN_DTYPE_UINT32: return "uint32";
    default: return kUnspecified;
  }
}

std::string_view Name(Recompute v) {
  switch (v) {
    case RECOMPUTE_NONE: return "none";
    case RECOMPUTE_SELECTIVE: return "selective";
    case RECOMPUTE_FULL: return "full";
    default: return kUnspecified;
  }
}

std::string_view Name(OptimizerKind v) {
  switch (v) {
    case OPTIMIZER_KIND_ADAMW: return "adamw";
    case OPTIMIZER_KIND_SGD: return "sgd";
    default: return kUnspecified;
  }
}

std::string_view Name(LrScheduleKind v) {
  switch (v) {
    case LR_SCHEDULE_KIND_CONSTANT: return "constant";
    case LR_SCHEDULE_KIND_LINEAR: return "linear";
    case LR_SCHEDULE_KIND_COSINE: return "cosine";
    default: return kUnspecified;
  }
}

std::string_view Name(Dtype v) {
  switch (v) {
    case DTYPE_FP32: return "fp32";
    case DTYPE_BF16: return "bf16";
    case DTYPE_FP16: return "fp16";
    default: return kUnspecified;
  }
}

std::string_view Name(LossScaling v) {
  switch (v) {
    case LOSS_SCALING_NONE: return "none";
    case LOSS_SCALING_DYNAMIC: return "dynamic";
    case LOSS_SCALING_STATIC: return "static";
    default: return kUnspecified;
  }
}

std::string_view Name(ResumePolicy v) {
  switch (v) {
    case RESUME_POLICY_AUTO: return "auto";
    case RESUME_POLICY_NEVER: return "never";
    default: return kUnspecified;
  }
}

std::string_view Name(DeviceType v) {
  switch (v) {
    case DEVICE_TYPE_CPU: return "cpu";
    case DEVICE_TYPE_CUDA: return "cuda";
    default: return kUnspecified;
  }
}

std::string_view Name(PipelineSchedule v) {
  switch (v) {
    case PIPELINE_SCHEDULE_GPIPE: return "gpipe";
    case PIPELINE_SCHEDULE_1F1B: return "1f1b";
    case PIPELINE_SCHEDULE_INTERLEAVED_1F1B: return "interleaved_1f1b";
    default: return kUnspecified;
  }
}

std::string_view Name(Offload v) {
  switch (v) {
    case OFFLOAD_NONE: return "none";
    case OFFLOAD_OPTIMIZER: return "optimizer";
    case OFFLOAD_ALL: return "all";
    default: return kUnspecified;
  }
}

std::string_view Name(Severity v) {
  switch (v) {
    case SEVERITY_WARNING: return "warning";
    case SEVERITY_NOTE: return "note";
    default: return kUnspecified;
  }
}

std::string_view Name(Collective v) {
  switch (v) {
    case COLLECTIVE_ALL_REDUCE: return "all_reduce";
    case COLLECTIVE_ALL_GATHER: return "all_gather";
    case COLLECTIVE_REDUCE_SCATTER: return "reduce_scatter";
    case COLLECTIVE_SEND_RECV: return "send_recv";
    default: return kUnspecified;
  }
}

std::string_view Name(LinkClass v) {
  switch (v) {
    case LINK_CLASS_INTRA_NODE: return "intra_node";
    case LINK_CLASS_INTER_NODE: return "inter_node";
    case LINK_CLASS_HOST: return "host";
    default: return kUnspecified;
  }
}

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (Dtype v : {DTYPE_FP32, DTYPE_BF16, DTYPE_FP16}) {
    if (Name(v) == name) return v;
  }
  return std::nullopt;
}

int DtypeBytes(Dtype v) {
  switch (v) {
    case DTYPE_FP32: return 4;
    case DTYPE_BF16:
    case DTYPE_FP16: return 2;
    default: return 0;
  }
}

}  // namespace accel::ir
