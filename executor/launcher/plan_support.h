// Checks `accel run` makes before any worker starts: plan features the executor cannot run yet,
// and training data that is missing or empty. Both report located diagnostics (job.yaml:L:C),
// never a silent fallback. Torch-free.
#ifndef ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_
#define ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_

#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "executor/support/executor_support.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::exec {

// Adds one error (code E0601, common/diag_codes.h kExecutorUnsupported) per ExecutorSupportIssues
// entry, located at the spec value of its field (spec.Locate), e.g.
//   job.yaml:30:11: error[E0601]: parallel.tensor 2 is not supported by the executor yet (supported: 1)
void CheckExecutorSupport(const ir::Plan& plan, const spec::JobSpec& spec,
                          const ExecutorCapabilities& capabilities, DiagnosticSink& sink);

// Adds errors (code E0602, kPretrainedMismatch) located at model.init_from when the plan names
// Hugging Face weights that cannot start it: the checkpoint cannot be read
// (executor/checkpoint/pretrained.h OpenPretrained), or, one error each for at most 10 and a
// count of the rest, tensors missing or of another shape or dtype (CheckPretrainedAgainstPlan).
// Nothing when the plan has no init_from. Reads only the files' headers.
void CheckPretrainedWeights(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink);

// Adds one error (code E0603, kTokenizerMismatch) located at data.train.tokenizer when the plan
// names a tokenizer file (ir::Data.tokenizer_path) that does not load (LoadPlanTokenizer's
// message after "cannot load tokenizer: "), or whose ids (added and special tokens included:
// tok::Tokenizer::id_limit) do not fit model.vocab_size, with a note at vocab_size and what to
// change: when the vocabulary comes from model.config, the tokenizer most likely belongs to
// another model; otherwise model.vocab_size can be raised. Nothing for `bytes` (the planner and
// the workers check 256). Reads and parses the tokenizer file once.
void CheckTokenizer(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink);

// Adds an error (code E0001, kFileUnreadable) located at data.train.path when plan.data.path does
// not exist ("training data does not exist: PATH"), is an empty file ("training data is empty:
// PATH"), or is a directory without any non-empty regular file ("training data directory has no
// non-empty files: PATH"). The workers apply the full text rules (executor/data/text_source.h);
// this check only makes the common mistakes fail before launch.
void CheckTrainingData(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_LAUNCHER_PLAN_SUPPORT_H_
