// How `accel run --min-nodes M` plans a job again when an elastic restart goes on with fewer
// nodes than it was launched with (launcher/run_job.h, RunOptions::replan).
//
// Policy: the job keeps its training semantics and gives up speed. The tensor, pipeline, context
// and expert degrees, the micro batch and the global batch stay; the data-parallel degree takes
// the lost ranks and the gradient accumulation grows to keep the global batch (as torchrun's
// elastic jobs are advised to do by hand, and DeepSpeed's elasticity config computes for a range
// of world sizes: "Elastic Training", deepspeed.ai/docs/config-json). With both data-parallel axes
// above 1 (hybrid sharding) the shard degree stays and the replicas shrink.
#ifndef ACCEL_CLI_ELASTIC_REPLAN_H_
#define ACCEL_CLI_ELASTIC_REPLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "launcher/executor_support.h"
#include "launcher/run_job.h"

namespace accel::cli {

// The --set overrides that plan launch_plan's job on `nodes` nodes under the policy above:
// cluster.nodes, parallel.data_replicate, parallel.data_shard, data.micro_batch_size,
// data.global_batch_size and data.grad_accum_steps=auto. Errors: InvalidArgument "N nodes hold R
// ranks, not a multiple of the K ranks of one data-parallel replica (tensor x pipeline x
// context)" and "... data-parallel degree D is not a multiple of the shard degree S ...".
absl::StatusOr<std::vector<std::string>> ShrinkOverrides(const ir::Plan& launch_plan, int nodes);

// The job of spec_file (with the user's overrides) planned for `nodes` nodes: ShrinkOverrides,
// then compiled and checked as `accel run` checks a job before launch (against capabilities,
// exec::CheckBeforeLaunch); the plan carries a note
// saying what changed. restart numbers the elastic restart (0: a check before launch). Errors:
// InvalidArgument with the errors' messages and codes ("global_batch_size 6 is not a multiple of
// ... (E0406)", joined by "; "), or ShrinkOverrides' message.
absl::StatusOr<exec::ReplannedJob> ReplanForNodes(const std::string& spec_file,
                                                  const std::vector<std::string>& overrides,
                                                  const ir::Plan& launch_plan, int nodes, int restart,
                                                  const exec::ExecutorCapabilities& capabilities);

}  // namespace accel::cli

#endif  // ACCEL_CLI_ELASTIC_REPLAN_H_
