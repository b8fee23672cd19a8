#include "executor/plan_agreement.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "checkpoint/run_identity.h"

namespace accel::exec {

// One definition with the hash checkpoints record (checkpoint/run_identity.h).
uint32_t PlanFingerprint(const ir::Plan& plan) { return PlanHash(plan); }

absl::Status CheckSamePlanOnEveryRank(const ir::Plan& plan, Communicator& world,
                                      const at::Device& device) {
  const int size = world.Size();
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
  at::Tensor mine = torch::full({1}, static_cast<int64_t>(PlanFingerprint(plan)), options);
  at::Tensor all = torch::empty({size}, options);
  if (absl::Status s = world.AllGather(mine, all); !s.ok()) return s;
  const at::Tensor host = all.cpu();
  const int64_t* prints = host.data_ptr<int64_t>();
  std::vector<int> others;
  for (int r = 1; r < size; ++r) {
    if (prints[r] != prints[0]) others.push_back(r);
  }
  if (others.empty()) return absl::OkStatus();
  const std::string who = others.size() == 1
                              ? absl::StrCat("rank ", others.front(), " runs")
                              : absl::StrCat("ranks ", absl::StrJoin(others, ", "), " run");
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s another plan (fingerprint 0x%08x) than rank 0 (0x%08x): every node must start the "
      "same job file with the same --set overrides",
      who, static_cast<uint32_t>(prints[others.front()]), static_cast<uint32_t>(prints[0])));
}

}  // namespace accel::exec
