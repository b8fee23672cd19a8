// The environment contract between `accel run` (the launcher) and `accel worker`: which rank a
// worker is and where it meets the others. Variable names follow torchrun, so tools that read
// RANK/WORLD_SIZE/MASTER_ADDR work unchanged. Torch-free.
#ifndef ACCEL_LAUNCHER_WORKER_ENV_H_
#define ACCEL_LAUNCHER_WORKER_ENV_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// Identity and rendezvous of one worker process.
struct WorkerEnv {
  // Global rank in [0, world_size). Env RANK.
  int rank = 0;
  // Device index on this node, in [0, local_world_size). Env LOCAL_RANK.
  int local_rank = 0;
  // Total number of workers. Env WORLD_SIZE.
  int world_size = 1;
  // Workers on this node. Env LOCAL_WORLD_SIZE.
  int local_world_size = 1;
  // Index of this node in [0, nodes). Env GROUP_RANK and NODE_RANK (torchrun sets GROUP_RANK).
  int node_rank = 0;
  // Host of the c10d TCPStore, served by global rank 0's worker. Env MASTER_ADDR.
  std::string master_addr = "127.0.0.1";
  // TCP port of the store, in [1, 65535]. Env MASTER_PORT.
  int master_port = 29500;
  // Directory of the run's outputs (metrics.jsonl, per-rank logs). Env ACCEL_RUN_DIR; "" means
  // the worker's working directory.
  std::string run_dir;
  // Intra-op threads of this worker (at::set_num_threads), >= 1. Env ACCEL_NUM_THREADS; also
  // exported as OMP_NUM_THREADS and OPENBLAS_NUM_THREADS so OpenMP regions and OpenBLAS's own
  // thread pool agree (executor/blas_threads.h), with OMP_WAIT_POLICY=PASSIVE: idle OpenMP
  // threads sleep instead of spinning on the cores OpenBLAS threads need (a 2-thread worker
  // ran a GPT-2 step in 0.20 s passive vs 0.57 s with libgomp's default spin, torch 1.13).
  int num_threads = 1;
  // When the launcher started, in nanoseconds since the Unix epoch (CLOCK_REALTIME), for the
  // "launch to first step" time; 0 when unknown. Env ACCEL_LAUNCH_UNIX_NS.
  int64_t launch_unix_ns = 0;
  // Identity of this launch of the job (`accel run` draws 128 random bits per attempt; multi-node
  // jobs take ACCEL_JOB_TOKEN from the environment, the same on every node). Workers compare it at
  // the rendezvous, so a stray worker of another job (or an earlier attempt) that reaches this
  // job's store is refused instead of joining. "" disables the check. Env ACCEL_JOB_TOKEN.
  std::string job_token;
  // Started by torchrun with its static rendezvous: its agent serves the store on MASTER_PORT.
  // Env TORCHELASTIC_USE_AGENT_STORE ("True"/"true"/"1").
  bool agent_store = false;
  // torchrun's restart count of this worker group. Env TORCHELASTIC_RESTART_COUNT.
  int restart_count = 0;
  // Single-node `accel run`: the rendezvous store is this file, not a TCP server on MASTER_PORT.
  // Env ACCEL_STORE_FILE; "" for TCP.
  std::string store_file;
  // The run id the workers' checkpoints record (checkpoint/run_identity.h): drawn once per
  // `accel run`, or the id of the checkpoint it resumes. Env ACCEL_RUN_ID; "" (workers started
  // without `accel run`, e.g. by torchrun) lets rank 0's store draw one or adopt the resumed one.
  std::string run_id;
};

// Looks up one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The variables a worker needs, as (name, value) pairs in a fixed order: RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, NODE_RANK, MASTER_ADDR, MASTER_PORT, ACCEL_RUN_DIR,
// ACCEL_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, OMP_WAIT_POLICY, ACCEL_LAUNCH_UNIX_NS,
// ACCEL_JOB_TOKEN, ACCEL_STORE_FILE, ACCEL_RUN_ID.
std::vector<std::pair<std::string, std::string>> WorkerEnvVariables(const WorkerEnv& env);

// Reads a WorkerEnv back from variables. RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT are
// required; LOCAL_RANK defaults to RANK, LOCAL_WORLD_SIZE to WORLD_SIZE, GROUP_RANK/NODE_RANK to
// 0, ACCEL_NUM_THREADS to 1, ACCEL_JOB_TOKEN and ACCEL_RUN_ID to "". Errors: InvalidArgument
// naming the variable when one is missing, not an integer, or out of range (rank outside
// [0, WORLD_SIZE), port outside [1, 65535]).
absl::StatusOr<WorkerEnv> WorkerEnvFromLookup(const EnvLookup& lookup);

// WorkerEnvFromLookup over this process's environment (getenv).
absl::StatusOr<WorkerEnv> WorkerEnvFromProcess();

// An EnvLookup over this process's environment.
EnvLookup ProcessEnvLookup();

// Parses a base-10 integer that must span the whole string. nullopt on any other text.
std::optional<int64_t> ParseInt(const std::string& text);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_WORKER_ENV_H_
