#include <catch2/catch.hpp>

#include "importers/shell_args.h"

namespace accel::importers {
namespace {

// "--flag@line:col=value@line:col,..." for compact comparisons of what was read and where.
std::string Show(const std::vector<ShellArg>& args) {
  std::string out;
  for (const ShellArg& a : args) {
    out += (a.launcher ? "L " : "") + a.flag.text + "@" + std::to_string(a.flag.at.line) + ":" +
           std::to_string(a.flag.at.column);
    for (const ShellWord& v : a.values) {
      out += " " + v.text + "@" + std::to_string(v.at.line) + ":" + std::to_string(v.at.column) +
             (v.unresolved.empty() ? "" : "?" + v.unresolved);
    }
    out += "\n";
  }
  return out;
}

TEST_CASE("shell args: arrays, continuations and variables keep where each word was written",
          "[importers][megatron]") {
  ShellArgs read = ReadShellArgs(R"(#!/bin/bash
TP=2
MODEL_ARGS=(
    --num-layers 4   # a comment
    --bf16
)
torchrun --nproc_per_node 8 pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    --tensor-model-parallel-size $TP --lr=1e-4
)");
  CHECK(read.script == "pretrain_gpt.py");
  CHECK(Show(read.args) ==
        "L --nproc_per_node@7:10 8@7:27\n"
        "--num-layers@4:5 4@4:18\n"
        "--bf16@5:5\n"
        "--tensor-model-parallel-size@9:5 2@9:34\n"
        "--lr@9:38 1e-4@9:43\n");
}

TEST_CASE("shell args: defaults, unset variables, quoted elements and string variables",
          "[importers][megatron]") {
  ShellArgs read = ReadShellArgs(R"(SAVE=$1
NODES=${SLURM_NNODES:-"2"}
OPTS="--seed 7 --bf16"
EXTRA=(
    "--fp8-format hybrid"
)
python pretrain_gpt.py --save $SAVE --nnodes $NODES $OPTS ${EXTRA[@]} ${UNSET[@]}
)");
  CHECK(Show(read.args) ==
        "--save@7:24 $SAVE@7:31?$SAVE\n"
        "--nnodes@7:37 2@7:46\n"
        "--seed@7:53 7@7:53\n"
        "--bf16@7:53\n"
        "--fp8-format@5:6 hybrid@5:19\n"
        "${UNSET[@]}@7:71\n");
  CHECK(read.args.back().flag.unresolved == "${UNSET[@]}");
}

TEST_CASE("shell args: the first branch of an if is read, the others kept apart",
          "[importers][megatron]") {
  ShellArgs read = ReadShellArgs(R"(ARGS=()
if [[ "$X" == "a" ]]; then
    ARGS+=(--bf16)
else
    ARGS+=(--fp16)
fi
torchrun pretrain_gpt.py ${ARGS[@]}
)");
  CHECK(Show(read.args) == "--bf16@3:12\n");
  CHECK(Show(read.skipped) == "--fp16@5:12\n");
}

TEST_CASE("shell args: an arguments file is lines of flags", "[importers][megatron]") {
  ShellArgs read = ReadShellArgs("# model\n--num-layers 2 --hidden-size 64\n--swiglu\n");
  CHECK(read.script.empty());
  CHECK(Show(read.args) == "--num-layers@2:1 2@2:14\n--hidden-size@2:16 64@2:30\n--swiglu@3:1\n");
  CHECK(ReadShellArgs("echo hello\n").args.empty());
}

TEST_CASE("shell args: what looks like a launch script or an arguments file",
          "[importers][megatron]") {
  CHECK(LooksLikeShellArgs("#!/bin/bash\nx=1\n"));
  CHECK(LooksLikeShellArgs("# args\n--num-layers 2\n"));
  CHECK_FALSE(LooksLikeShellArgs("---\nkey: value\n"));
  CHECK_FALSE(LooksLikeShellArgs("compute_environment: LOCAL_MACHINE\n"));
}

}  // namespace
}  // namespace accel::importers
