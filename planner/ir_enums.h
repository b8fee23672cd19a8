// The accel.ir enum value for each spec enum value: the planner's one mapping from what the user
// wrote to what the plan holds (the reverse, for text, is ir/enum_names.h).
#ifndef ACCEL_PLANNER_IR_ENUMS_H_
#define ACCEL_PLANNER_IR_ENUMS_H_

#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::planner {

ir::Architecture ToIr(spec::Arch v);
ir::DataFormat ToIr(spec::DataFormat v);
ir::TokenDtype ToIr(spec::TokenDtype v);
ir::OptimizerKind ToIr(spec::OptimizerName v);
ir::LrScheduleKind ToIr(spec::LrScheduleName v);
ir::Dtype ToIr(spec::DType v);
ir::LossScaling ToIr(spec::LossScaling v);
ir::PipelineSchedule ToIr(spec::PipelineSchedule v);
ir::Recompute ToIr(spec::Recompute v);
ir::Offload ToIr(spec::Offload v);
ir::DeviceType ToIr(spec::DeviceType v);
ir::ResumePolicy ToIr(spec::ResumeMode v);
ir::RouterScoring ToIr(spec::RouterScoring v);
ir::ContextParallelMethod ToIr(spec::ContextMethod v);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_IR_ENUMS_H_
