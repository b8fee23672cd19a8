#ifndef ACCEL_IMPORTERS_MEGATRON_IMPORTER_H_
#define ACCEL_IMPORTERS_MEGATRON_IMPORTER_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "importers/import_context.h"
#include "spec/yaml_tree.h"

namespace accel::importers {

// The arguments of a Megatron-LM launch script or arguments file (importers/shell_args.h) as the
// located tree the importers walk: one mapping entry per argument, in order, whose key is the
// flag ("--num-layers", located at the flag) and whose value is its word (located at the word,
// typed like a YAML plain scalar unless quoted), `true` for a switch such as --bf16, or a list
// for several words. The root mapping's value (unused by mappings) is the training script the
// launch command runs ("pretrain_gpt.py"), "" for an arguments file. Arguments the importer cannot read are reported here as W0701 at their
// line:column and left out: values that refer to a variable the script does not set ($1,
// $CHECKPOINT_PATH, `$(...)`), references to unset arrays where arguments go, and arguments in
// an elif/else branch (the first branch of an if is the one read). E0704 when the text has no
// launch command and no argument lines.
std::unique_ptr<spec::YamlDocument> ParseMegatronArgs(std::string_view text, const std::string& file,
                                                      DiagnosticSink& sink);

// Maps Megatron-LM's arguments (megatron/training/arguments.py and the config dataclasses it
// builds them from, NVIDIA/Megatron-LM d98e8a64) onto `context.spec()`:
//   parallel degrees (--tensor/pipeline-model-parallel-size, --context-parallel-size,
//   --expert-model-parallel-size, --sequence-parallel, the virtual pipeline) with the world
//   from torchrun's --nproc_per_node × --nnodes; --use-distributed-optimizer as ZeRO-1, Megatron
//   FSDP and torch FSDP2 by --data-parallel-sharding-strategy; batch sizes, --train-iters, the
//   AdamW/SGD optimizer and the warmup + linear/cosine/constant schedule with Megatron's defaults
//   where the script leaves them out; --bf16/--fp16; --recompute-granularity; the model's shape
//   (--num-layers, --hidden-size, ..., llama for rotary + SwiGLU + RMSNorm, gpt2 for learned
//   positions + GELU + LayerNorm) and mixture of experts; --save/--save-interval.
// Errors (nothing written): E0703 for fp8/fp4, other optimizers and schedules, other position
// embeddings or a mix of the two architectures, expert tensor parallelism other than tp, a
// virtual pipeline that does not divide the layers; E0702 for wrong types. Other flags follow
// ImportContext::Walk's rule (W0701).
void ImportMegatron(const YamlNode& root, ImportContext& context);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_MEGATRON_IMPORTER_H_
