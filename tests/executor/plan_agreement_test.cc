// Ranks compare plan fingerprints at rendezvous (executor/plan_agreement.h).
#include "executor/plan_agreement.h"

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "multi_rank.h"

namespace accel::exec {
namespace {

ir::Plan SomePlan() {
  ir::Plan plan;
  plan.mutable_job()->set_name("agreement");
  plan.mutable_job()->set_spec_file("/home/a/job.yaml");
  plan.mutable_model()->set_arch(ir::ARCHITECTURE_GPT2);
  plan.mutable_model()->set_hidden_size(64);
  plan.mutable_batch()->set_steps(10);
  return plan;
}

std::vector<std::string> Check(const std::vector<ir::Plan>& plans) {
  return testing::RunRanks(static_cast<int>(plans.size()), [&](int rank, Rendezvous& rdzv) {
    auto world = rdzv.CreateWorld(CommBackend::kGloo);
    testing::Ok(world.status());
    absl::Status s = CheckSamePlanOnEveryRank(plans[rank], **world, torch::kCPU);
    if (!s.ok()) throw std::runtime_error(std::string(s.message()));
  });
}

TEST_CASE("ranks with the same plan agree, whatever the spec file path or overrides") {
  ir::Plan elsewhere = SomePlan();
  elsewhere.mutable_job()->set_spec_file("/mnt/b/copy-of-job.yaml");
  elsewhere.mutable_job()->add_overrides("batch.steps=10");
  CHECK(PlanFingerprint(elsewhere) == PlanFingerprint(SomePlan()));
  for (const std::string& e : Check({SomePlan(), elsewhere, SomePlan()})) CHECK(e == "");
}

TEST_CASE("a rank with another plan stops every rank, naming it") {
  ir::Plan edited = SomePlan();
  edited.mutable_batch()->set_steps(11);
  REQUIRE(PlanFingerprint(edited) != PlanFingerprint(SomePlan()));
  const std::vector<std::string> errors = Check({SomePlan(), SomePlan(), edited, edited});
  char expected[256];
  std::snprintf(expected, sizeof expected,
                "ranks 2, 3 run another plan (fingerprint 0x%08x) than rank 0 (0x%08x): every node "
                "must start the same job file with the same --set overrides",
                PlanFingerprint(edited), PlanFingerprint(SomePlan()));
  for (const std::string& e : errors) CHECK(e == expected);
}

}  // namespace
}  // namespace accel::exec
