#ifndef ACCEL_IMPORTERS_SHELL_ARGS_H_
#define ACCEL_IMPORTERS_SHELL_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/source_location.h"

// The command-line arguments of a training launch, read out of a bash launch script (Megatron-LM's
// examples: arrays such as `GPT_MODEL_ARGS=( --num-layers 96 ... )` spliced into a
// backslash-continued `torchrun ... pretrain_gpt.py ${GPT_MODEL_ARGS[@]}` line) or out of an
// arguments file (lines of `--flag value`), each argument with the line:column it was written at.
//
// This is not a shell: it reads the statements in order, keeps the variables and arrays they
// assign, and expands `$VAR`, `${VAR}`, `${VAR:-default}` and `${ARR[@]}` the way bash would for
// the common cases. It does not run commands: `$(...)`, `$((...))`, positional parameters ($1)
// and variables the script never assigns are unresolved (ShellWord::unresolved). Of an
// if/elif/else only the first branch is read (its condition is taken as true); the arguments of
// the other branches are kept apart (ShellArgs::skipped) so the importer can name them.
namespace accel::importers {

// One word after expansion.
struct ShellWord {
  std::string text;
  SourceLocation at;        // where the word (or the array element it came from) starts
  bool quoted = false;      // written in quotes: a string even when it looks like a number
  std::string unresolved;   // the first reference that could not be expanded ("$1"), or ""
};

// One argument: `--flag` with the words up to the next flag (`--flag=value` gives one).
struct ShellArg {
  ShellWord flag;                 // the flag as written, "--num-layers"
  std::vector<ShellWord> values;  // none for a switch such as --bf16
  bool launcher = false;          // an argument of torchrun/python -m torch.distributed.run
};

struct ShellArgs {
  // The arguments of the launch command in order: the launcher's (before the script) then the
  // training script's. Empty when the text has no launch command and no argument lines.
  std::vector<ShellArg> args;
  // Arguments written in branches not read (elif/else), for the importer to report.
  std::vector<ShellArg> skipped;
  // The training script the command runs ("pretrain_gpt.py"), "" for an arguments file.
  std::string script;
};

// Reads `text`. A statement whose first word starts with `--` is an argument line (an arguments
// file); a statement with a word ending in `.py` is the launch command, whose later words are
// the training script's arguments (and words between torchrun and the script the launcher's).
// When there are several launch commands, the last is taken. Never fails.
ShellArgs ReadShellArgs(std::string_view text);

// True when the words of `text` look like a launch script or an arguments file (a `#!` line
// naming sh or bash, or first content starting with `--`): for format detection.
bool LooksLikeShellArgs(std::string_view text);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_SHELL_ARGS_H_
