// How a worker's error names its rank: "rank R: MESSAGE", once. Many messages from the layers
// below already start with the rank ("rank 1: the rendezvous store ... belongs to another job",
// "rank 1 waited ..."); prefixing those again printed "rank 1: rank 1: ...". Torch-free.
#ifndef ACCEL_LAUNCHER_RANK_MESSAGE_H_
#define ACCEL_LAUNCHER_RANK_MESSAGE_H_

#include <string>
#include "absl/strings/string_view.h"

namespace accel::exec {

// "rank R: " + message, or message unchanged when it already starts with "rank R:" or "rank R ".
std::string WithRank(int rank, absl::string_view message);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RANK_MESSAGE_H_
