#include "launcher/slurm_env.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace accel::exec {

namespace {

// Reads an integer variable; `fallback` names a second variable tried when the first is unset.
absl::StatusOr<std::optional<int64_t>> ReadSlurmInt(const EnvLookup& lookup,
                                                    const std::string& name,
                                                    const std::string& fallback = "") {
  std::string used = name;
  std::optional<std::string> text = lookup(name);
  if (!text.has_value() && !fallback.empty()) {
    used = fallback;
    text = lookup(fallback);
  }
  if (!text.has_value()) return std::optional<int64_t>();
  std::optional<int64_t> value = ParseInt(*text);
  if (!value.has_value() || *value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(used, "='", *text, "' is not a non-negative integer"));
  }
  // SlurmEnv holds ints: a larger value would be truncated (4294967296 read as 0).
  if (*value > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(used, "='", *text, "' is out of range (at most ",
                                                   std::numeric_limits<int>::max(), ")"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::optional<SlurmEnv>> SlurmEnvFromLookup(const EnvLookup& lookup) {
  auto proc_id = ReadSlurmInt(lookup, "SLURM_PROCID");
  if (!proc_id.ok()) return proc_id.status();
  if (!proc_id->has_value()) return std::optional<SlurmEnv>();
  auto node_id = ReadSlurmInt(lookup, "SLURM_NODEID");
  if (!node_id.ok()) return node_id.status();
  auto local_id = ReadSlurmInt(lookup, "SLURM_LOCALID");
  if (!local_id.ok()) return local_id.status();
  auto ntasks = ReadSlurmInt(lookup, "SLURM_NTASKS", "SLURM_NPROCS");
  if (!ntasks.ok()) return ntasks.status();
  auto nnodes = ReadSlurmInt(lookup, "SLURM_NNODES", "SLURM_JOB_NUM_NODES");
  if (!nnodes.ok()) return nnodes.status();
  if (!node_id->has_value()) return absl::InvalidArgumentError("SLURM_NODEID is not set");
  if (!local_id->has_value()) return absl::InvalidArgumentError("SLURM_LOCALID is not set");
  if (!ntasks->has_value()) return absl::InvalidArgumentError("SLURM_NTASKS is not set");

  SlurmEnv env;
  env.proc_id = static_cast<int>(**proc_id);
  env.node_id = static_cast<int>(**node_id);
  env.local_id = static_cast<int>(**local_id);
  env.ntasks = static_cast<int>(**ntasks);
  env.nnodes = nnodes->has_value() ? static_cast<int>(**nnodes) : 1;
  env.job_id = lookup("SLURM_JOB_ID").value_or("");
  env.nodelist = lookup("SLURM_JOB_NODELIST").value_or(lookup("SLURM_NODELIST").value_or(""));
  if (env.ntasks < 1) return absl::InvalidArgumentError("SLURM_NTASKS=0 is not a task count");
  if (env.proc_id >= env.ntasks) {
    return absl::InvalidArgumentError(absl::StrCat("SLURM_PROCID=", env.proc_id,
                                                   " is not below SLURM_NTASKS=", env.ntasks));
  }
  if (env.nnodes < 1 || env.node_id >= env.nnodes) {
    return absl::InvalidArgumentError(absl::StrCat("SLURM_NODEID=", env.node_id,
                                                   " is not below SLURM_NNODES=", env.nnodes));
  }
  return std::optional<SlurmEnv>(env);
}

absl::StatusOr<std::string> FirstHostOfNodeList(const std::string& nodelist) {
  // The first entry ends at the first comma outside brackets.
  int depth = 0;
  size_t end = nodelist.size();
  for (size_t i = 0; i < nodelist.size(); ++i) {
    char c = nodelist[i];
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth < 0) break;
    } else if (c == ',' && depth == 0) {
      end = i;
      break;
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unbalanced '[' in SLURM node list '", nodelist, "'"));
  }
  std::string entry = nodelist.substr(0, end);
  if (entry.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("empty SLURM node list '", nodelist, "'"));
  }
  size_t open = entry.find('[');
  if (open == std::string::npos) return entry;
  size_t close = entry.find(']', open);
  if (close == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("unbalanced '[' in SLURM node list '", nodelist, "'"));
  }
  // Inside the brackets: ranges "07-09" and single numbers separated by commas; the first range's
  // start is the first host. A suffix after ']' (rare, e.g. "n[1-2]-ib") is kept.
  std::string ranges = entry.substr(open + 1, close - open - 1);
  std::string first = ranges.substr(0, ranges.find_first_of(",-"));
  if (first.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty range in SLURM node list '", nodelist, "'"));
  }
  return entry.substr(0, open) + first + entry.substr(close + 1);
}

int SlurmDefaultPort(const std::string& job_id) {
  std::optional<int64_t> id = ParseInt(job_id);
  if (!id.has_value() || *id < 0) return 29500;
  return static_cast<int>(10000 + *id % 20000);
}

}  // namespace accel::exec
