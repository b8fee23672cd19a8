// The spec's spelling of every accel.ir enum value ("bf16" for DTYPE_BF16, "1f1b" for
// PIPELINE_SCHEDULE_1F1B), for `accel plan` text, messages and file formats that use the
// spec's words, and the way back for such files. Torch-free.
#ifndef ACCEL_IR_ENUM_NAMES_H_
#define ACCEL_IR_ENUM_NAMES_H_

#include <optional>
#include <string_view>

#include "ir/plan.pb.h"

namespace accel::ir {

// The spec's word for the value; "unspecified" for *_UNSPECIFIED and for a number the enum does
// not define (a plan from a newer writer), so that a message can still name what it got.
std::string_view Name(Backend v);           // "gloo", "nccl"
std::string_view Name(Architecture v);      // "gpt2", "llama"
std::string_view Name(DataFormat v);        // "text", "tokens"
std::string_view Name(TokenizerKind v);     // "bytes", "huggingface", "sentencepiece"
std::string_view Name(TokenDtype v);        // "uint16", "uint32"
std::string_view Name(Recompute v);         // "none", "selective", "full"
std::string_view Name(OptimizerKind v);     // "adamw", "sgd"
std::string_view Name(LrScheduleKind v);    // "constant", "linear", "cosine"
std::string_view Name(Dtype v);             // "fp32", "bf16", "fp16"
std::string_view Name(LossScaling v);       // "none", "dynamic", "static"
std::string_view Name(ResumePolicy v);      // "auto", "never"
std::string_view Name(ContextParallelMethod v);  // "ring", "ulysses"
std::string_view Name(RouterScoring v);     // "softmax", "sigmoid"
std::string_view Name(NormPlacement v);     // "post", "pre_and_post" ("unspecified": pre-norms)
std::string_view Name(MlpActivation v);     // "gelu_tanh" ("unspecified": silu)
std::string_view Name(DeviceType v);        // "cpu", "cuda"
std::string_view Name(PipelineSchedule v);  // "gpipe", "1f1b", "interleaved_1f1b"
std::string_view Name(Offload v);           // "none", "optimizer", "all"
std::string_view Name(Severity v);          // "warning", "note"
std::string_view Name(Collective v);        // "all_reduce", "all_gather", "reduce_scatter", "send_recv"
std::string_view Name(LinkClass v);         // "intra_node", "inter_node", "host"
std::string_view Name(MatmulLayout v);      // "nn", "nt", "tn"

// The value whose Name is `name`; nullopt for any other word (including "unspecified").
std::optional<Dtype> ParseDtype(std::string_view name);
std::optional<MatmulLayout> ParseMatmulLayout(std::string_view name);

// Bytes per element: 4 for FP32, 2 for BF16 and FP16, 0 for UNSPECIFIED.
int DtypeBytes(Dtype v);

}  // namespace accel::ir

#endif  // ACCEL_IR_ENUM_NAMES_H_
