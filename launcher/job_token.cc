#include "launcher/job_token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace accel::exec {

absl::StatusOr<std::string> NewJobToken() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("getrandom: ", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  std::string token;
  for (uint8_t b : bytes) absl::StrAppendFormat(&token, "%02x", b);
  return token;
}

absl::StatusOr<std::string> JobTokenFor(const LaunchLayout& layout,
                                        const std::string& slurm_job_id, const EnvLookup& lookup) {
  if (std::optional<std::string> given = lookup("ACCEL_JOB_TOKEN")) {
    if (given->empty()) return absl::InvalidArgumentError("ACCEL_JOB_TOKEN is empty");
    return *given;
  }
  // A SLURM job's nodes agree on its id; a job by hand has nothing its nodes share but what the
  // user gives them.
  if (layout.mode.rfind("slurm", 0) == 0) {
    return slurm_job_id.empty() ? std::string() : absl::StrCat("slurm-", slurm_job_id);
  }
  if (layout.mode == "single-node") return NewJobToken();
  return std::string();
}

}  // namespace accel::exec
