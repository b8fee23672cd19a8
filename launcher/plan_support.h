// Checks `accel run` makes before any worker starts: plan features the executor cannot run yet,
// and training data, a tokenizer or Hugging Face weights that cannot serve the plan. Each problem
// names the spec field it is about; the cli locates that field in the job file
// (cli/pre_launch_checks.h), so the launcher never reads the spec. Torch-free.
#ifndef ACCEL_LAUNCHER_PLAN_SUPPORT_H_
#define ACCEL_LAUNCHER_PLAN_SUPPORT_H_

#include <string>
#include <vector>

#include "ir/plan.pb.h"
#include "launcher/executor_support.h"

namespace accel::exec {

// One pre-launch error about a spec field.
struct PlanIssue {
  std::string code;     // common/diag_codes.h, e.g. kExecutorUnsupported "E0601"
  std::string field;    // dotted spec path the error is located at: "data.train.path"
  std::string message;  // one line, no trailing period
  // Optional: a note at the value of note_field (when it was set in a file, not defaulted), and
  // advice that depends on whether note_field's value came from the model's config.json.
  std::string note_field;
  std::string note;
  std::string advice_if_from_model_config;
  std::string advice_otherwise;
  // A warning (code W...) rather than an error: reported, and the launch goes on.
  bool warning = false;
};

// One E0601 (kExecutorUnsupported) issue per ExecutorSupportIssues entry, at its field, e.g.
//   parallel.tensor: "parallel.tensor 2 is not supported by the executor yet (supported: 1)".
std::vector<PlanIssue> CheckExecutorSupport(const ir::Plan& plan, const ExecutorCapabilities& capabilities);

// E0602 (kPretrainedMismatch) issues at model.init_from when the plan names Hugging Face weights
// that cannot start it: the checkpoint cannot be read (checkpoint/pretrained.h OpenPretrained), or,
// one issue each for at most 10 and a count of the rest, tensors missing or of another shape or
// dtype (CheckPretrainedAgainstPlan). None when the plan has no init_from. Reads only headers.
std::vector<PlanIssue> CheckPretrainedWeights(const ir::Plan& plan);

// One E0603 (kTokenizerMismatch) issue at data.train.tokenizer when the plan names a tokenizer file
// (ir::Data.tokenizer_path) that does not load (LoadPlanTokenizer's message after "cannot load
// tokenizer: "), or whose ids (added and special tokens included: tok::Tokenizer::id_limit) do not
// fit model.vocab_size; then note_field is model.vocab_size, and the advice says the tokenizer
// belongs to another model when the vocabulary came from model.config, else what to raise. None
// for `bytes` (the planner and the workers check 256). Reads and parses the tokenizer file once.
std::vector<PlanIssue> CheckTokenizer(const ir::Plan& plan);

// One E0001 (kFileUnreadable) issue at data.train.path when plan.data.path does not exist
// ("training data does not exist: PATH"), is an empty file ("training data is empty: PATH"), or is
// a directory without any non-empty regular file ("training data directory has no non-empty files:
// PATH"). The workers apply the full text rules (data/text_source.h); this check only makes the
// common mistakes fail before launch.
std::vector<PlanIssue> CheckTrainingData(const ir::Plan& plan);

// Every check above, in that order: support, training data, tokenizer, weights.
std::vector<PlanIssue> CheckBeforeLaunch(const ir::Plan& plan, const ExecutorCapabilities& capabilities);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_PLAN_SUPPORT_H_
