// libFuzzer target: the binary plan file `accel worker --plan FILE` reads (cli/worker_command.cc):
// ir::Plan::ParseFromString, then what the worker checks before it builds anything
// (executor/worker.cc CheckPlanRunnable): ir::VerifyPlan, and the executor's support check
// exec::ExecutorSupportIssues (launcher/plan_support.h, torch-free). A plan that
// verifies is then read the way the worker reads its process groups (ir::GroupOf per rank).
//
// The plan is written by `accel run` for its own workers, but a worker started by hand, a stale
// file or a corrupt disk can hand it anything: VerifyPlan must reject every malformed plan with a
// message, never crash, overflow or allocate without bound.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "launcher/plan_support.h"
#include "google/protobuf/stubs/logging.h"
#include "fuzz/fuzz_util.h"
#include "ir/plan.pb.h"
#include "ir/plan_access.h"
#include "ir/plan_verifier.h"

// protobuf logs every string field that is not UTF-8; a parse failure is all that matters here.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  ir::Plan plan;
  if (!plan.ParseFromArray(data, static_cast<int>(size))) return 0;
  const std::vector<std::string> problems = ir::VerifyPlan(plan);
  for (const std::string& p : problems) ACCEL_FUZZ_CHECK(!p.empty(), "empty violation message");
  for (bool cuda : {false, true}) {
    for (const exec::SupportIssue& issue : exec::ExecutorSupportIssues(plan, exec::ExecutorCapabilities{cuda})) {
      ACCEL_FUZZ_CHECK(!issue.field.empty() && !issue.message.empty(), "support issue without field or message");
    }
  }
  if (problems.empty()) {
    // A verified plan: every rank finds exactly one group in every set (VerifyGroups' promise).
    const int world = std::min(plan.ranks_size(), 64);
    for (const ir::ProcessGroupSet& set : plan.process_groups()) {
      for (int rank = 0; rank < world; ++rank) {
        const std::vector<int> group = ir::GroupOf(plan, set.name(), rank);
        ACCEL_FUZZ_CHECK(std::find(group.begin(), group.end(), rank) != group.end(),
                         "verified plan: rank " + std::to_string(rank) + " has no group in " + set.name());
      }
    }
  }
  return 0;
}
