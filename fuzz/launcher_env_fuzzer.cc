// libFuzzer target: the environment a worker and the launcher read (launcher/worker_env.h
// and slurm_env.h): RANK, WORLD_SIZE, MASTER_PORT, ... and SLURM's task variables and compressed
// host lists. Each input line is NAME=VALUE; the last line is also given to FirstHostOfNodeList.
//
// Invariants: an accepted WorkerEnv is in range (0 <= rank < world_size, port in [1, 65535], ...)
// and survives WorkerEnvVariables -> WorkerEnvFromLookup unchanged; an accepted SlurmEnv holds
// exactly the integers the variables spell, with proc_id < ntasks and node_id < nnodes; a first
// host is non-empty; SlurmDefaultPort is 29500 or in [10000, 30000).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "launcher/slurm_env.h"
#include "launcher/worker_env.h"
#include "fuzz/fuzz_util.h"

namespace {

using accel::exec::EnvLookup;

EnvLookup LookupIn(const std::map<std::string, std::string>& vars) {
  return [&vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The value ReadSlurmInt should have read for name (or its fallback), as a number.
std::optional<int64_t> Spelled(const std::map<std::string, std::string>& vars, const char* name,
                               const char* fallback = nullptr) {
  auto it = vars.find(name);
  if (it == vars.end() && fallback != nullptr) it = vars.find(fallback);
  if (it == vars.end()) return std::nullopt;
  return accel::exec::ParseInt(it->second);
}

void CheckSlurm(const std::map<std::string, std::string>& vars) {
  using namespace accel::exec;
  absl::StatusOr<std::optional<SlurmEnv>> slurm = SlurmEnvFromLookup(LookupIn(vars));
  if (!slurm.ok() || !slurm->has_value()) return;
  const SlurmEnv& s = **slurm;
  ACCEL_FUZZ_CHECK(s.proc_id >= 0 && s.proc_id < s.ntasks, "SLURM proc_id out of range");
  ACCEL_FUZZ_CHECK(s.node_id >= 0 && s.node_id < s.nnodes, "SLURM node_id out of range");
  ACCEL_FUZZ_CHECK(s.local_id >= 0, "SLURM local_id negative");
  ACCEL_FUZZ_CHECK(Spelled(vars, "SLURM_PROCID") == s.proc_id, "SLURM_PROCID read as " + std::to_string(s.proc_id));
  ACCEL_FUZZ_CHECK(Spelled(vars, "SLURM_NODEID") == s.node_id, "SLURM_NODEID read as " + std::to_string(s.node_id));
  ACCEL_FUZZ_CHECK(Spelled(vars, "SLURM_LOCALID") == s.local_id, "SLURM_LOCALID read as " + std::to_string(s.local_id));
  ACCEL_FUZZ_CHECK(Spelled(vars, "SLURM_NTASKS", "SLURM_NPROCS") == s.ntasks,
                   "SLURM_NTASKS read as " + std::to_string(s.ntasks));
  const std::optional<int64_t> nnodes = Spelled(vars, "SLURM_NNODES", "SLURM_JOB_NUM_NODES");
  ACCEL_FUZZ_CHECK(nnodes.value_or(1) == s.nnodes, "SLURM_NNODES read as " + std::to_string(s.nnodes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel::exec;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> vars;
  std::string last_line;
  for (std::string_view line : accel::fuzz::Split(input, "\n", 64)) {
    last_line = std::string(line);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) vars[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }

  absl::StatusOr<WorkerEnv> env = WorkerEnvFromLookup(LookupIn(vars));
  if (env.ok()) {
    ACCEL_FUZZ_CHECK(env->world_size >= 1 && env->rank >= 0 && env->rank < env->world_size, "rank out of range");
    ACCEL_FUZZ_CHECK(env->local_world_size >= 1 && env->local_rank >= 0 && env->local_rank < env->local_world_size,
                     "local rank out of range");
    ACCEL_FUZZ_CHECK(env->master_port >= 1 && env->master_port <= 65535, "port out of range");
    ACCEL_FUZZ_CHECK(env->num_threads >= 1 && env->node_rank >= 0 && !env->master_addr.empty(), "bad env");
    std::map<std::string, std::string> exported;
    for (const auto& [name, value] : WorkerEnvVariables(*env)) exported[name] = value;
    absl::StatusOr<WorkerEnv> again = WorkerEnvFromLookup(LookupIn(exported));
    ACCEL_FUZZ_CHECK(again.ok(), "exported worker env does not read back: " + again.status().ToString());
    ACCEL_FUZZ_CHECK(again->rank == env->rank && again->local_rank == env->local_rank &&
                         again->world_size == env->world_size && again->local_world_size == env->local_world_size &&
                         again->node_rank == env->node_rank && again->master_addr == env->master_addr &&
                         again->master_port == env->master_port && again->run_dir == env->run_dir &&
                         again->num_threads == env->num_threads && again->launch_unix_ns == env->launch_unix_ns,
                     "worker env changed in a round trip");
  }

  CheckSlurm(vars);

  absl::StatusOr<std::string> host = FirstHostOfNodeList(last_line);
  if (host.ok()) {
    ACCEL_FUZZ_CHECK(!host->empty(), "empty first host");
  }
  const int port = SlurmDefaultPort(last_line);
  ACCEL_FUZZ_CHECK(port == 29500 || (port >= 10000 && port < 30000), "default port " + std::to_string(port));
  return 0;
}
