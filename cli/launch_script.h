// Cluster launch files for a planned job: a SLURM batch script and a Kubeflow PyTorchJob
// manifest, sized from the plan's topology (nodes, devices per node, device type) and running
// `accel run` on every node. Torch-free.
#ifndef ACCEL_CLI_LAUNCH_SCRIPT_H_
#define ACCEL_CLI_LAUNCH_SCRIPT_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::cli {

// What the launch files need besides the plan.
struct LaunchScriptInputs {
  std::string spec_path;  // the job file as given to accel (the batch script runs it from there)
  std::string spec_text;  // its contents (the manifest carries them in a ConfigMap)
  std::string image;      // container image holding accel and the data (kubernetes only)
  std::string accel = "accel";  // the accel command inside the job's environment
};

// An sbatch script: one task per node (`--ntasks-per-node=1`), `--gpus-per-node` = devices per
// node on cuda, `--cpus-per-task` = devices per node on cpu, then `srun accel run SPEC`; accel
// reads SLURM's variables for the node rank and the master (launcher/slurm_env.h) and
// starts one worker per device. The run directory is runs/<job>-$SLURM_JOB_ID.
std::string SlurmScript(const ir::Plan& plan, const LaunchScriptInputs& in);

// Two YAML documents: a ConfigMap holding the job file, and a kubeflow.org/v1 PyTorchJob with a
// Master replica and nodes − 1 Worker replicas (none for one node), each a pod running
// `accel run /etc/accel/job.yaml --node-rank $(RANK) --master-addr $(MASTER_ADDR) --master-port
// $(MASTER_PORT)` (variables the training operator sets per pod) with `nvidia.com/gpu` or `cpu`
// limits of devices per node. Errors: InvalidArgument when in.image is empty.
absl::StatusOr<std::string> KubernetesManifest(const ir::Plan& plan, const LaunchScriptInputs& in);

// The job name as a DNS-1123 label (Kubernetes object names): lower case, [a-z0-9-], at most 63
// characters, starting and ending with an alphanumeric; "accel-job" when nothing is left.
std::string Dns1123Label(const std::string& name);

}  // namespace accel::cli

#endif  // ACCEL_CLI_LAUNCH_SCRIPT_H_
