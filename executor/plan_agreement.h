// Every rank of a job must execute the same plan. Multi-node jobs are started once per node (by
// hand, SLURM or Kubernetes), each launcher compiling its own copy of the job file: a node with
// an edited file or other --set overrides would build other process groups or shapes and hang
// or train wrongly. The workers compare plan fingerprints right after the rendezvous, before any
// group is built.
#ifndef ACCEL_EXECUTOR_PLAN_AGREEMENT_H_
#define ACCEL_EXECUTOR_PLAN_AGREEMENT_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/status.h"
#include "executor/communicator.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// CRC-32C (checkpoint/crc32c.h) of the plan's deterministic serialization, leaving out
// job.spec_file and job.overrides: the same job may be started from a file at another path, or
// with overrides that say what another node's file says. Equal plans give equal fingerprints.
uint32_t PlanFingerprint(const ir::Plan& plan);

// All-gathers every rank's PlanFingerprint over `world` (a tensor on `device`, where the world's
// backend runs) and fails on every rank when any differs from rank 0's:
// FailedPrecondition "ranks 2, 3 run another plan (fingerprint 0x...) than rank 0 (0x...): every
// node must start the same job file with the same --set overrides". Errors of the all-gather
// pass through.
absl::Status CheckSamePlanOnEveryRank(const ir::Plan& plan, Communicator& world,
                                      const at::Device& device);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_PLAN_AGREEMENT_H_
