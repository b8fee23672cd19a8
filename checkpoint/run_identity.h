// Which run wrote a checkpoint: the job's name, a hash of the plan and a run id. `accel run` draws
// the run id once per invocation; a run that resumes a checkpoint keeps that checkpoint's id, so a
// chain of resumed runs (a lineage) shares one id. The store (checkpoint_store.h) records the
// identity in every manifest.json it publishes, prunes only checkpoints of its own run id and
// never replaces another run's checkpoint; `resume: auto` considers only the job's own checkpoints.
// Torch-free.
#ifndef ACCEL_CHECKPOINT_RUN_IDENTITY_H_
#define ACCEL_CHECKPOINT_RUN_IDENTITY_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// The identity a checkpoint records ("run" and "layout" in manifest.json). Every field is empty
// (layout null) for a checkpoint written before identities were recorded, and for a store made
// without one (tests, tools that only read).
struct CheckpointIdentity {
  std::string job;        // plan.job.name
  std::string plan_hash;  // PlanHashHex of the plan that wrote it, e.g. "0x1a2b3c4d"
  std::string run_id;     // 32 lowercase hex digits (NewRunId)
  // ResumeLayoutOf(plan) (checkpoint/resume_layout.h): what a later plan is compared with.
  nlohmann::json layout;
};

// CRC-32C of the plan's deterministic serialization without job.spec_file and job.overrides (the
// same job started from another path or with equivalent overrides hashes the same). Equal to the
// executor's PlanFingerprint (executor/plan_agreement.h), which is defined by it.
uint32_t PlanHash(const ir::Plan& plan);

// PlanHash as "0x" and 8 lowercase hex digits.
std::string PlanHashHex(const ir::Plan& plan);

// 32 lowercase hex digits of getrandom(2) randomness (128 bits). Errors: Internal when the kernel
// gives no randomness.
absl::StatusOr<std::string> NewRunId();

// The identity of a run of plan with run_id ("" when the caller has none yet: the store draws one
// at its first write unless ContinueRun adopts a resumed checkpoint's).
CheckpointIdentity IdentityOfPlan(const ir::Plan& plan, std::string run_id);

// How messages name a run: "run 1a2b3c4d" (the first 8 digits), "an unrecorded run" for "".
std::string RunLabel(const std::string& run_id);

// The manifest's "run" object: {"job": ..., "plan_hash": ..., "run_id": ...}.
nlohmann::json IdentityToJson(const CheckpointIdentity& identity);

// Reads a manifest's "run" and "layout" members; missing ones (older checkpoints) stay empty.
// Members of the wrong type are ignored the same way: the identity is informational, the files'
// CRCs protect the data.
CheckpointIdentity IdentityFromManifest(const nlohmann::json& manifest);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_RUN_IDENTITY_H_
