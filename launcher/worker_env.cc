#include "launcher/worker_env.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace accel::exec {

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  // absl::SimpleAtoi accepts surrounding whitespace; environment values with spaces are a
  // mistake worth reporting, so reject them first.
  if (text.empty() || text.front() == ' ' || text.back() == ' ') return std::nullopt;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

std::vector<std::pair<std::string, std::string>> WorkerEnvVariables(const WorkerEnv& env) {
  return {
      {"RANK", absl::StrCat(env.rank)},
      {"LOCAL_RANK", absl::StrCat(env.local_rank)},
      {"WORLD_SIZE", absl::StrCat(env.world_size)},
      {"LOCAL_WORLD_SIZE", absl::StrCat(env.local_world_size)},
      {"GROUP_RANK", absl::StrCat(env.node_rank)},
      {"NODE_RANK", absl::StrCat(env.node_rank)},
      {"MASTER_ADDR", env.master_addr},
      {"MASTER_PORT", absl::StrCat(env.master_port)},
      {"ACCEL_RUN_DIR", env.run_dir},
      {"ACCEL_NUM_THREADS", absl::StrCat(env.num_threads)},
      {"OMP_NUM_THREADS", absl::StrCat(env.num_threads)},
      {"OPENBLAS_NUM_THREADS", absl::StrCat(env.num_threads)},
      {"OMP_WAIT_POLICY", "PASSIVE"},
      {"ACCEL_LAUNCH_UNIX_NS", absl::StrCat(env.launch_unix_ns)},
      {"ACCEL_JOB_TOKEN", env.job_token},
      {"ACCEL_STORE_FILE", env.store_file},
      {"ACCEL_RUN_ID", env.run_id},
  };
}

namespace {

// Reads an integer variable into *out; a missing optional variable leaves *out unchanged.
absl::Status ReadInt(const EnvLookup& lookup, const std::string& name, bool required,
                     int64_t min_value, int64_t max_value, int64_t* out) {
  std::optional<std::string> text = lookup(name);
  if (!text.has_value()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat(name, " is not set"));
    return absl::OkStatus();
  }
  std::optional<int64_t> value = ParseInt(*text);
  if (!value.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(name, "='", *text, "' is not an integer"));
  }
  if (*value < min_value || *value > max_value) {
    return absl::InvalidArgumentError(absl::StrCat(name, "=", *value, " is outside [", min_value,
                                                   ", ", max_value, "]"));
  }
  *out = *value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WorkerEnv> WorkerEnvFromLookup(const EnvLookup& lookup) {
  constexpr int64_t kMaxRanks = 1 << 24;
  int64_t world_size = 1;
  if (auto s = ReadInt(lookup, "WORLD_SIZE", true, 1, kMaxRanks, &world_size); !s.ok()) return s;
  int64_t rank = 0;
  if (auto s = ReadInt(lookup, "RANK", true, 0, world_size - 1, &rank); !s.ok()) return s;
  int64_t local_world_size = world_size;
  if (auto s = ReadInt(lookup, "LOCAL_WORLD_SIZE", false, 1, world_size, &local_world_size);
      !s.ok()) {
    return s;
  }
  int64_t local_rank = rank < local_world_size ? rank : 0;
  if (auto s = ReadInt(lookup, "LOCAL_RANK", false, 0, local_world_size - 1, &local_rank);
      !s.ok()) {
    return s;
  }
  int64_t node_rank = 0;
  if (auto s = ReadInt(lookup, "GROUP_RANK", false, 0, kMaxRanks, &node_rank); !s.ok()) return s;
  if (auto s = ReadInt(lookup, "NODE_RANK", false, 0, kMaxRanks, &node_rank); !s.ok()) return s;
  int64_t port = 0;
  if (auto s = ReadInt(lookup, "MASTER_PORT", true, 1, 65535, &port); !s.ok()) return s;
  int64_t threads = 1;
  if (auto s = ReadInt(lookup, "ACCEL_NUM_THREADS", false, 1, 4096, &threads); !s.ok()) return s;
  int64_t launch_ns = 0;
  if (auto s = ReadInt(lookup, "ACCEL_LAUNCH_UNIX_NS", false, 0, INT64_MAX, &launch_ns); !s.ok()) {
    return s;
  }
  int64_t restarts = 0;
  if (auto s = ReadInt(lookup, "TORCHELASTIC_RESTART_COUNT", false, 0, kMaxRanks, &restarts);
      !s.ok()) {
    return s;
  }
  std::optional<std::string> addr = lookup("MASTER_ADDR");
  if (!addr.has_value() || addr->empty()) {
    return absl::InvalidArgumentError("MASTER_ADDR is not set");
  }

  WorkerEnv env;
  env.rank = static_cast<int>(rank);
  env.local_rank = static_cast<int>(local_rank);
  env.world_size = static_cast<int>(world_size);
  env.local_world_size = static_cast<int>(local_world_size);
  env.node_rank = static_cast<int>(node_rank);
  env.master_addr = *addr;
  env.master_port = static_cast<int>(port);
  env.run_dir = lookup("ACCEL_RUN_DIR").value_or("");
  env.num_threads = static_cast<int>(threads);
  env.launch_unix_ns = launch_ns;
  env.job_token = lookup("ACCEL_JOB_TOKEN").value_or("");
  const std::string agent = lookup("TORCHELASTIC_USE_AGENT_STORE").value_or("");
  env.agent_store = agent == "True" || agent == "true" || agent == "1";
  env.restart_count = static_cast<int>(restarts);
  env.store_file = lookup("ACCEL_STORE_FILE").value_or("");
  env.run_id = lookup("ACCEL_RUN_ID").value_or("");
  return env;
}

EnvLookup ProcessEnvLookup() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<WorkerEnv> WorkerEnvFromProcess() { return WorkerEnvFromLookup(ProcessEnvLookup()); }

}  // namespace accel::exec
