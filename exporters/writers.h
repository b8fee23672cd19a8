// One writer per target format (exporter.h dispatches). Each writes the target's config for a
// complete plan and notes in `report` every aspect (export_report.h) it writes, approximates or
// cannot express. Returned texts end with a newline.
#ifndef ACCEL_EXPORTERS_WRITERS_H_
#define ACCEL_EXPORTERS_WRITERS_H_

#include <string>

#include "exporters/export_report.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::exporters {

// DeepSpeed JSON: batch sizes, zero_optimization (stage, offload, MiCS for HSDP), bf16/fp16,
// communication_data_type, gradient_clipping, optimizer, scheduler, tensor_parallel (AutoTP).
std::string WriteDeepSpeed(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report);

// Accelerate YAML: distributed_type (NO, MULTI_CPU/GPU, FSDP, DEEPSPEED, MEGATRON_LM),
// processes and machines, mixed_precision, fsdp_config / deepspeed_config / megatron_lm_config,
// parallelism_config.
std::string WriteAccelerate(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report);

// torchtitan JSON in Trainer.Config.to_dict() form (torchtitan at 9810191b, PR #2386): every
// field at torchtitan's default except those accel decides (model_spec.name, hf_assets_path,
// dump_folder, metrics.log_freq, optimizer, lr_scheduler, training, parallelism, checkpoint,
// activation_checkpoint, debug.seed).
std::string WriteTorchtitan(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report);

// Megatron-LM: `ARGS=( --flag value ... )` and `torchrun ... pretrain_gpt.py "${ARGS[@]}"`,
// the form importers/megatron_importer.h reads.
std::string WriteMegatron(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report);

}  // namespace accel::exporters

#endif  // ACCEL_EXPORTERS_WRITERS_H_
