#ifndef ACCEL_CLI_ESTIMATE_MEMORY_COMMAND_H_
#define ACCEL_CLI_ESTIMATE_MEMORY_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel estimate-memory --model CONFIG.json|SPEC.yaml [--dtypes LIST]
//  [--zero-stage 2|3 --gpus G [--nodes N]] [--set k=v]... [--werror]`.
struct EstimateMemoryOptions {
  // A Hugging Face config.json, or a job spec (detected by the extension .yaml / .yml).
  std::string model;
  // Accelerate's dtype columns: float32, float16, int8, int4 (config.json only).
  std::vector<std::string> dtypes = {"float32", "float16", "int8", "int4"};
  // DeepSpeed estimator to print (2 or 3); 0: none. Needs `gpus` (config.json only).
  int zero_stage = 0;
  // GPUs per node and nodes for the DeepSpeed figures (DeepSpeed's num_gpus_per_node and
  // num_nodes; G = gpus · nodes).
  int64_t gpus = 0;
  int64_t nodes = 1;
  // --set overrides applied to a spec (spec only).
  std::vector<std::string> overrides;
  // Spec only: planner warnings are errors (reported as error[W...], no estimate, exit 1).
  bool werror = false;
};

// With a config.json: prints the exact parameter count with its breakdown, Accelerate's
// loading table (planner/memory_model.h AccelerateEstimateTable over the causal-LM parameters),
// and with --zero-stage the DeepSpeed per-GPU/per-CPU figures with and without offload.
// With a spec: loads and plans it (memory fit allowed to fail) and prints every pipeline
// stage's memory terms, totals, the device limit and the fit, plus changes that would fit.
// Diagnostics go to `err`. Returns 0 (printed; for a spec: every stage fits), 1 (unreadable or
// invalid config/spec, a stage does not fit, or a planner warning with `werror`), 2 (usage:
// --zero-stage without --gpus, --gpus/--nodes outside 1..the limits of spec/limits.h, options
// that need a config.json given with a spec).
int RunEstimateMemory(const EstimateMemoryOptions& options, std::ostream& out, std::ostream& err);

// Registers `estimate-memory` on the app (a CommandRegistrar).
void RegisterEstimateMemoryCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_ESTIMATE_MEMORY_COMMAND_H_
