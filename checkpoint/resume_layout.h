// What a checkpoint records about the layout that wrote it, keyed by spec field path, so a later
// plan can be compared with it field by field before any worker starts (`accel plan --resume-from`,
// `accel run` with resume: auto; launcher/resume_check.h says what each difference means).
// Torch-free.
#ifndef ACCEL_CHECKPOINT_RESUME_LAYOUT_H_
#define ACCEL_CHECKPOINT_RESUME_LAYOUT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/plan.pb.h"

namespace accel::exec {

// What a difference in one recorded field means for a resume.
enum class LayoutFieldKind {
  kModel,      // a tensor shape or the vocabulary: the checkpoint cannot load
  kReshard,    // a degree or the sharding stage: the sharded checkpoint is read resharded
  kPrecision,  // precision.params: parameters come from the fp32 values stored (master or own)
  kOptimizer,  // training.optimizer.name: the optimizer state cannot carry over
  kData,       // data.seq_len, data.train.path: the data position does not carry over
  kBatch,      // data.global_batch_size: the rest of the run trains with another batch
};

// One recorded field: its spec path ("parallel.tensor"), its kind, and its value in a plan (a JSON
// number or string).
struct LayoutField {
  const char* field;
  LayoutFieldKind kind;
  nlohmann::json (*value)(const ir::Plan& plan);
};

// The recorded fields, model ones first, in the order reports list them.
const std::vector<LayoutField>& ResumeLayoutFields();

// {"model.hidden_size": 768, "parallel.tensor": 2, ...}: every ResumeLayoutFields value of plan,
// plus "data.global_batch_size_auto" (true when the planner resolved it from `auto`), and
// "format": "single" when the workers write model.safetensors/optimizer.pt (stage 0, fp32, no
// tensor, pipeline or expert parallelism: the executor's Trainer::ShardedCheckpoint() false) or
// "sharded" (shard-*.safetensors, readable under any layout), and "padded_vocab_size" (the
// embedding's rows: the vocabulary rounded up to a multiple of 128 × tp).
nlohmann::json ResumeLayoutOf(const ir::Plan& plan);

// A recorded value as messages show it: strings unquoted, numbers as written.
std::string LayoutValueText(const nlohmann::json& value);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_RESUME_LAYOUT_H_
