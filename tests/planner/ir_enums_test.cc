// Every spec enum value maps to the ir value of the same word (planner/ir_enums.h finds it by
// word), so a value added to the spec without its plan.proto twin fails here.
#include "planner/ir_enums.h"

#include <catch2/catch.hpp>

#include <string>

#include "ir/enum_names.h"

namespace accel::planner {
namespace {

// ToIr(v) is a known value spelled as the spec spells v.
template <typename S>
void CheckMaps(std::initializer_list<S> values) {
  for (S v : values) {
    const auto mapped = ToIr(v);
    INFO(spec::Name(v));
    CHECK(mapped != 0);
    CHECK(ir::Name(mapped) == std::string(spec::Name(v)));
  }
}

TEST_CASE("every spec enum value has its plan enum value", "[planner][enum]") {
  CheckMaps({spec::Arch::kGpt2, spec::Arch::kLlama});
  CheckMaps({spec::DataFormat::kText, spec::DataFormat::kTokens});
  CheckMaps({spec::TokenDtype::kUint16, spec::TokenDtype::kUint32});
  CheckMaps({spec::OptimizerName::kAdamW, spec::OptimizerName::kSgd});
  CheckMaps({spec::LrScheduleName::kConstant, spec::LrScheduleName::kLinear,
             spec::LrScheduleName::kCosine});
  CheckMaps({spec::DType::kFp32, spec::DType::kBf16, spec::DType::kFp16});
  CheckMaps({spec::LossScaling::kNone, spec::LossScaling::kDynamic, spec::LossScaling::kStatic});
  CheckMaps({spec::PipelineSchedule::kGpipe, spec::PipelineSchedule::k1F1B,
             spec::PipelineSchedule::kInterleaved1F1B, spec::PipelineSchedule::kZbH1,
             spec::PipelineSchedule::kZbv});
  CheckMaps({spec::Recompute::kNone, spec::Recompute::kSelective, spec::Recompute::kFull});
  CheckMaps({spec::Offload::kNone, spec::Offload::kOptimizer, spec::Offload::kAll});
  CheckMaps({spec::DeviceType::kCpu, spec::DeviceType::kCuda});
  CheckMaps({spec::ResumeMode::kAuto, spec::ResumeMode::kNever});
  CheckMaps({spec::RouterScoring::kSoftmax, spec::RouterScoring::kSigmoid});
}

TEST_CASE("spec values map to the plan values of the same meaning", "[planner][enum]") {
  CHECK(ToIr(spec::DType::kBf16) == ir::DTYPE_BF16);
  CHECK(ToIr(spec::PipelineSchedule::kInterleaved1F1B) == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B);
  CHECK(ToIr(spec::PipelineSchedule::kZbH1) == ir::PIPELINE_SCHEDULE_ZB_H1);
  CHECK(ToIr(spec::PipelineSchedule::kZbv) == ir::PIPELINE_SCHEDULE_ZBV);
  CHECK(ToIr(spec::Offload::kNone) == ir::OFFLOAD_NONE);
  CHECK(ToIr(spec::ResumeMode::kNever) == ir::RESUME_POLICY_NEVER);
  CHECK(ToIr(spec::DeviceType::kCuda) == ir::DEVICE_TYPE_CUDA);
}

}  // namespace
}  // namespace accel::planner
