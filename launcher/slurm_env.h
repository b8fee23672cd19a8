// What SLURM tells a task started by `srun` about its place in the job. Torch-free.
#ifndef ACCEL_LAUNCHER_SLURM_ENV_H_
#define ACCEL_LAUNCHER_SLURM_ENV_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "launcher/worker_env.h"

namespace accel::exec {

// The SLURM variables of one task (slurm.schedmd.com/srun.html, "OUTPUT ENVIRONMENT VARIABLES").
struct SlurmEnv {
  int proc_id = 0;      // SLURM_PROCID: task index in the step, in [0, ntasks)
  int node_id = 0;      // SLURM_NODEID: node index in the allocation, in [0, nnodes)
  int local_id = 0;     // SLURM_LOCALID: task index on this node
  int ntasks = 1;       // SLURM_NTASKS (or SLURM_NPROCS): tasks in the step
  int nnodes = 1;       // SLURM_NNODES (or SLURM_JOB_NUM_NODES); 1 when neither is set
  std::string job_id;   // SLURM_JOB_ID, "" when not set
  std::string nodelist; // SLURM_JOB_NODELIST (or SLURM_NODELIST), compressed hostlist
};

// Reads the SLURM variables. Returns nullopt when SLURM_PROCID is not set (not under srun).
// Errors: InvalidArgument naming the variable when SLURM_PROCID is set but SLURM_NODEID,
// SLURM_LOCALID or SLURM_NTASKS is missing, not an integer, above 2147483647, or inconsistent
// (proc_id >= ntasks, node_id >= nnodes).
absl::StatusOr<std::optional<SlurmEnv>> SlurmEnvFromLookup(const EnvLookup& lookup);

// The first host of a SLURM compressed hostlist: "node[07-09,12],gpu1" -> "node07",
// "gpu-a[3]" -> "gpu-a3", "host1,host2" -> "host1". Zero padding of the range start is kept.
// Errors: InvalidArgument for an empty list or an unbalanced bracket.
absl::StatusOr<std::string> FirstHostOfNodeList(const std::string& nodelist);

// The TCPStore port for a SLURM job when none is given: 10000 + (job id mod 20000), so the tasks
// of one job agree without talking and concurrent jobs sharing a node rarely collide. 29500
// (torchrun's default) when job_id is empty or not numeric.
int SlurmDefaultPort(const std::string& job_id);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_SLURM_ENV_H_
