#include "ir/enum_names.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

namespace accel::ir {
namespace {

using google::protobuf::EnumDescriptor;

constexpr std::string_view kUnspecified = "unspecified";

// Every value's word: its proto name without the enum's prefix (what precedes "UNSPECIFIED" in
// the value numbered 0), in lower case. plan.proto names values so that this is the spec's
// spelling (DTYPE_BF16 -> "bf16", PIPELINE_SCHEDULE_1F1B -> "1f1b"); ir_enum_names_test checks
// every enum.
std::map<int, std::string> WordsOf(const EnumDescriptor* descriptor) {
  constexpr std::string_view kZeroSuffix = "UNSPECIFIED";
  const google::protobuf::EnumValueDescriptor* zero = descriptor->FindValueByNumber(0);
  const std::string zero_name = zero != nullptr ? zero->name() : std::string();
  const size_t prefix =
      zero_name.size() >= kZeroSuffix.size() ? zero_name.size() - kZeroSuffix.size() : 0;
  std::map<int, std::string> words;
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = descriptor->value(i);
    if (value->number() == 0) continue;
    std::string word = value->name().substr(std::min(prefix, value->name().size()));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.emplace(value->number(), std::move(word));
  }
  return words;
}

// The words of the enum `Descriptor` describes, built once (a function-local static: thread-safe
// and lock-free after the first call) and never changed, so the views stay valid.
template <const EnumDescriptor* (*Descriptor)()>
const std::map<int, std::string>& Words() {
  static const std::map<int, std::string> words = WordsOf(Descriptor());
  return words;
}

template <const EnumDescriptor* (*Descriptor)()>
std::string_view Word(int value) {
  const std::map<int, std::string>& words = Words<Descriptor>();
  auto it = words.find(value);
  return it == words.end() ? kUnspecified : std::string_view(it->second);
}

}  // namespace

std::string_view Name(Backend v) { return Word<Backend_descriptor>(v); }
std::string_view Name(Architecture v) { return Word<Architecture_descriptor>(v); }
std::string_view Name(DataFormat v) { return Word<DataFormat_descriptor>(v); }
std::string_view Name(TokenizerKind v) { return Word<TokenizerKind_descriptor>(v); }
std::string_view Name(TokenDtype v) { return Word<TokenDtype_descriptor>(v); }
std::string_view Name(Recompute v) { return Word<Recompute_descriptor>(v); }
std::string_view Name(OptimizerKind v) { return Word<OptimizerKind_descriptor>(v); }
std::string_view Name(LrScheduleKind v) { return Word<LrScheduleKind_descriptor>(v); }
std::string_view Name(Dtype v) { return Word<Dtype_descriptor>(v); }
std::string_view Name(LossScaling v) { return Word<LossScaling_descriptor>(v); }
std::string_view Name(ResumePolicy v) { return Word<ResumePolicy_descriptor>(v); }
std::string_view Name(RouterScoring v) { return Word<RouterScoring_descriptor>(v); }
std::string_view Name(NormPlacement v) { return Word<NormPlacement_descriptor>(v); }
std::string_view Name(MlpActivation v) { return Word<MlpActivation_descriptor>(v); }
std::string_view Name(ContextParallelMethod v) { return Word<ContextParallelMethod_descriptor>(v); }
std::string_view Name(DeviceType v) { return Word<DeviceType_descriptor>(v); }
std::string_view Name(PipelineSchedule v) { return Word<PipelineSchedule_descriptor>(v); }
std::string_view Name(Offload v) { return Word<Offload_descriptor>(v); }
std::string_view Name(Severity v) { return Word<Severity_descriptor>(v); }
std::string_view Name(Collective v) { return Word<Collective_descriptor>(v); }
std::string_view Name(LinkClass v) { return Word<LinkClass_descriptor>(v); }
std::string_view Name(MatmulLayout v) { return Word<MatmulLayout_descriptor>(v); }

namespace {

template <typename E, const EnumDescriptor* (*Descriptor)()>
std::optional<E> Parse(std::string_view name) {
  for (const auto& [number, word] : Words<Descriptor>()) {
    if (word == name) return static_cast<E>(number);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Dtype> ParseDtype(std::string_view name) {
  return Parse<Dtype, Dtype_descriptor>(name);
}

std::optional<MatmulLayout> ParseMatmulLayout(std::string_view name) {
  return Parse<MatmulLayout, MatmulLayout_descriptor>(name);
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
