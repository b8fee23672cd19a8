#include "launcher/job_token.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "checkpoint/run_identity.h"

namespace accel::exec {

absl::StatusOr<std::string> NewJobToken() { return NewRunId(); }

absl::StatusOr<std::string> JobTokenFor(const LaunchLayout& layout, const std::string& slurm_job_id,
                                        const std::string& plan_hash, const EnvLookup& lookup) {
  if (std::optional<std::string> given = lookup("ACCEL_JOB_TOKEN")) {
    if (given->empty()) return absl::InvalidArgumentError("ACCEL_JOB_TOKEN is empty");
    return *given;
  }
  // A SLURM job's nodes agree on its id; a job by hand has nothing its nodes share but the plan
  // and what the user gives them.
  if (layout.mode.rfind("slurm", 0) == 0 && !slurm_job_id.empty()) return absl::StrCat("slurm-", slurm_job_id);
  if (layout.mode == "single-node") return NewJobToken();
  return absl::StrCat("plan-", plan_hash);
}

}  // namespace accel::exec
