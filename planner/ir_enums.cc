#include "planner/ir_enums.h"

#include <google/protobuf/descriptor.h>

#include <array>
#include <string_view>

#include "ir/enum_names.h"

namespace accel::planner {
namespace {

// The value of the ir enum E whose word (ir/enum_names.h) is the spec's word `word`, or
// UNSPECIFIED for a word the enum lacks. The spec and the plan spell every value alike;
// tests/planner/ir_enums_test.cc checks that for every spec value.
template <typename E>
E FromWord(const google::protobuf::EnumDescriptor* descriptor, std::string_view word) {
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const E value = static_cast<E>(descriptor->value(i)->number());
    if (value != 0 && ir::Name(value) == word) return value;
  }
  return static_cast<E>(0);
}

// ToIr of spec value `v`, looked up by word once per spec enum: the planner maps every field of
// every candidate of a layout search, so the mapping is a table read (spec enums are small,
// numbered from 0).
template <typename E, const google::protobuf::EnumDescriptor* (*Descriptor)(), typename S>
E Mapped(S v) {
  constexpr size_t kMaxValues = 8;
  static const std::array<E, kMaxValues> table = [] {
    std::array<E, kMaxValues> t{};
    for (size_t i = 0; i < kMaxValues; ++i) {
      t[i] = FromWord<E>(Descriptor(), spec::Name(static_cast<S>(i)));
    }
    return t;
  }();
  const auto index = static_cast<size_t>(v);
  return index < kMaxValues ? table[index] : FromWord<E>(Descriptor(), spec::Name(v));
}

}  // namespace

ir::Architecture ToIr(spec::Arch v) {
  return Mapped<ir::Architecture, ir::Architecture_descriptor>(v);
}
ir::DataFormat ToIr(spec::DataFormat v) {
  return Mapped<ir::DataFormat, ir::DataFormat_descriptor>(v);
}
ir::TokenDtype ToIr(spec::TokenDtype v) {
  return Mapped<ir::TokenDtype, ir::TokenDtype_descriptor>(v);
}
ir::OptimizerKind ToIr(spec::OptimizerName v) {
  return Mapped<ir::OptimizerKind, ir::OptimizerKind_descriptor>(v);
}
ir::LrScheduleKind ToIr(spec::LrScheduleName v) {
  return Mapped<ir::LrScheduleKind, ir::LrScheduleKind_descriptor>(v);
}
ir::Dtype ToIr(spec::DType v) { return Mapped<ir::Dtype, ir::Dtype_descriptor>(v); }
ir::LossScaling ToIr(spec::LossScaling v) {
  return Mapped<ir::LossScaling, ir::LossScaling_descriptor>(v);
}
ir::PipelineSchedule ToIr(spec::PipelineSchedule v) {
  return Mapped<ir::PipelineSchedule, ir::PipelineSchedule_descriptor>(v);
}
ir::Recompute ToIr(spec::Recompute v) {
  return Mapped<ir::Recompute, ir::Recompute_descriptor>(v);
}
ir::Offload ToIr(spec::Offload v) {
  return Mapped<ir::Offload, ir::Offload_descriptor>(v);
}
ir::DeviceType ToIr(spec::DeviceType v) {
  return Mapped<ir::DeviceType, ir::DeviceType_descriptor>(v);
}
ir::ResumePolicy ToIr(spec::ResumeMode v) {
  return Mapped<ir::ResumePolicy, ir::ResumePolicy_descriptor>(v);
}
ir::RouterScoring ToIr(spec::RouterScoring v) {
  return Mapped<ir::RouterScoring, ir::RouterScoring_descriptor>(v);
}
ir::ContextParallelMethod ToIr(spec::ContextMethod v) {
  return Mapped<ir::ContextParallelMethod, ir::ContextParallelMethod_descriptor>(v);
}

}  // namespace accel::planner
