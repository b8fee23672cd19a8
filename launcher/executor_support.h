// What the executor can run, judged from an ir::Plan alone: the check `accel run` makes before
// any worker starts (launcher/plan_support.h reports it located in the spec), each
// worker repeats on the plan it loaded, and `accel plan --search` uses to rank only layouts the
// executor runs. Torch-free and spec-free, so the core `accel` binary links it.
#ifndef ACCEL_LAUNCHER_EXECUTOR_SUPPORT_H_
#define ACCEL_LAUNCHER_EXECUTOR_SUPPORT_H_

#include <string>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::exec {

// What this build of the executor can run.
struct ExecutorCapabilities {
  // LibTorch was built with CUDA (and, for multi-rank, NCCL).
  bool cuda = false;
  // LibTorch has the fused scaled_dot_product_attention (2.0 and later) that
  // model.attention_kernel ATTENTION_KERNEL_SDPA asks for.
  bool sdpa = false;
};

// One plan feature the executor cannot run: the spec field that asked for it (dotted path) and
// the message, e.g. {"parallel.tensor", "parallel.tensor 2 is not supported by the executor yet
// (supported: 1)"}.
struct SupportIssue {
  std::string field;
  std::string message;
};

// Every plan feature this executor cannot run, in spec order; empty when it can run the plan.
// Reads only the plan (the workers call it on the plan they loaded). Checked:
// parallel.context (cp) > 1 (from the mesh, so a resolved `auto` is caught), cluster.device cuda without capabilities.cuda, the SDPA attention kernel
// (which the planner chooses for cuda) without capabilities.sdpa, precision.params fp16,
// precision.compute fp16 on a cpu device (no fp16 matmul in LibTorch's CPU kernels), precision.reduce
// other than fp32/bf16.
std::vector<SupportIssue> ExecutorSupportIssues(const ir::Plan& plan,
                                                const ExecutorCapabilities& capabilities);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_EXECUTOR_SUPPORT_H_
