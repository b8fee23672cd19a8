// `accel plan JOB --resume-from CKPT`: whether a checkpoint continues under the job's layout —
// the same model, what is resharded, what carries over and what is lost — from the checkpoint's
// manifest and trainer state alone (launcher/resume_check.h), without LibTorch.
#ifndef ACCEL_CLI_RESUME_FROM_H_
#define ACCEL_CLI_RESUME_FROM_H_

#include <ostream>
#include <string>

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::cli {

// Checks checkpoint (a step directory, or a checkpoint directory whose newest valid checkpoint is
// taken) against plan: E0604/W0601 diagnostics located in spec go to err, the report
// (exec::ResumeReportText) to out. Returns kExitOk when it loads, kExitInvalid when it does not or
// cannot be read ("error: cannot resume from CKPT: REASON").
int RunResumeFrom(const ir::Plan& plan, const spec::JobSpec& spec, const SourceManager& sources,
                  const std::string& checkpoint, std::ostream& out, std::ostream& err);

}  // namespace accel::cli

#endif  // ACCEL_CLI_RESUME_FROM_H_
