// The identity of one launch of a job, compared by the workers at the rendezvous
// (RendezvousOptions::job_token): a worker of another job, or of an earlier attempt of this one,
// that reaches this job's store is refused instead of joining it. Protects against accidents
// (two jobs on one port, a stale worker), not against an attacker on the cluster network: the
// token travels in clear text (see docs/faults.md, "Threat model"). Torch-free.
#ifndef ACCEL_LAUNCHER_JOB_TOKEN_H_
#define ACCEL_LAUNCHER_JOB_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "launcher/launch_layout.h"
#include "launcher/worker_env.h"

namespace accel::exec {

// 32 lowercase hex digits of getrandom(2) randomness (128 bits). Errors: Internal when the
// kernel gives no randomness.
absl::StatusOr<std::string> NewJobToken();

// The token of this launch: ACCEL_JOB_TOKEN from `lookup` when set (every node of a multi-node
// job must give the same value); otherwise a fresh NewJobToken() for a single-node layout,
// "slurm-<SLURM_JOB_ID>" under SLURM with a job id, and "plan-<plan_hash>" for a multi-node job
// started by hand (or under SLURM without a job id): its nodes share nothing else, and the plan
// hash at least keeps a different job's ranks out of this job's store (two launches of the same
// plan on one port need ACCEL_JOB_TOKEN to be told apart). Errors: InvalidArgument
// "ACCEL_JOB_TOKEN is empty" for an empty variable; those of NewJobToken.
absl::StatusOr<std::string> JobTokenFor(const LaunchLayout& layout, const std::string& slurm_job_id,
                                        const std::string& plan_hash, const EnvLookup& lookup);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_JOB_TOKEN_H_
