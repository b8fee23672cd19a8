#include "planner/ir_enums.h"

#include <google/protobuf/descriptor.h>

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

}  // namespace

ir::Architecture ToIr(spec::Arch v) {
  return FromWord<ir::Architecture>(ir::Architecture_descriptor(), spec::Name(v));
}
ir::DataFormat ToIr(spec::DataFormat v) {
  return FromWord<ir::DataFormat>(ir::DataFormat_descriptor(), spec::Name(v));
}
ir::TokenDtype ToIr(spec::TokenDtype v) {
  return FromWord<ir::TokenDtype>(ir::TokenDtype_descriptor(), spec::Name(v));
}
ir::OptimizerKind ToIr(spec::OptimizerName v) {
  return FromWord<ir::OptimizerKind>(ir::OptimizerKind_descriptor(), spec::Name(v));
}
ir::LrScheduleKind ToIr(spec::LrScheduleName v) {
  return FromWord<ir::LrScheduleKind>(ir::LrScheduleKind_descriptor(), spec::Name(v));
}
ir::Dtype ToIr(spec::DType v) { return FromWord<ir::Dtype>(ir::Dtype_descriptor(), spec::Name(v)); }
ir::LossScaling ToIr(spec::LossScaling v) {
  return FromWord<ir::LossScaling>(ir::LossScaling_descriptor(), spec::Name(v));
}
ir::PipelineSchedule ToIr(spec::PipelineSchedule v) {
  return FromWord<ir::PipelineSchedule>(ir::PipelineSchedule_descriptor(), spec::Name(v));
}
ir::Recompute ToIr(spec::Recompute v) {
  return FromWord<ir::Recompute>(ir::Recompute_descriptor(), spec::Name(v));
}
ir::Offload ToIr(spec::Offload v) {
  return FromWord<ir::Offload>(ir::Offload_descriptor(), spec::Name(v));
}
ir::DeviceType ToIr(spec::DeviceType v) {
  return FromWord<ir::DeviceType>(ir::DeviceType_descriptor(), spec::Name(v));
}
ir::ResumePolicy ToIr(spec::ResumeMode v) {
  return FromWord<ir::ResumePolicy>(ir::ResumePolicy_descriptor(), spec::Name(v));
}

}  // namespace accel::planner
