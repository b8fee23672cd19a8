#include "launcher/rank_message.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace accel::exec {

std::string WithRank(int rank, absl::string_view message) {
  const std::string who = absl::StrCat("rank ", rank);
  if (absl::StartsWith(message, who + ":") || absl::StartsWith(message, who + " ")) return std::string(message);
  return absl::StrCat(who, ": ", message);
}

}  // namespace accel::exec
