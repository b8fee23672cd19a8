// Checks `accel run` makes before any worker starts: plan features the executor cannot run yet,
// and training data that is missing or empty. Both report located diagnostics (job.yaml:L:C),
// never a silent fallback. Torch-free.
#ifndef ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_
#define ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::exec {

// What this build of the executor can run.
struct ExecutorCapabilities {
  // LibTorch was built with CUDA (and, for multi-rank, NCCL).
  bool cuda = false;
};

// Adds one error (code E0601, common/diag_codes.h kExecutorUnsupported) per plan feature the
// executor cannot run, located at the spec value that asked for it (spec.Locate), e.g.
//   job.yaml:30:11: error[E0601]: sharding.stage 3 is not supported by the executor yet (supported: 0)
// Checked: sharding.stage > 0, parallel.tensor (tp) > 1, parallel.pipeline (pp) > 1,
// parallel.context (cp) > 1 (degrees read from the plan's mesh, so `auto` values are caught as
// resolved), cluster.device cuda without capabilities.cuda, precision.params other than fp32,
// precision.loss_scaling other than none, training.recompute other than none.
void CheckExecutorSupport(const ir::Plan& plan, const spec::JobSpec& spec,
                          const ExecutorCapabilities& capabilities, DiagnosticSink& sink);

// Adds an error (code E0001, kFileUnreadable) located at data.train.path when plan.data.path does
// not exist ("training data does not exist: PATH"), is an empty file ("training data is empty:
// PATH"), or is a directory without any non-empty regular file ("training data directory has no
// non-empty files: PATH"). The workers apply the full text rules (executor/data/text_source.h);
// this check only makes the common mistakes fail before launch.
void CheckTrainingData(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_
