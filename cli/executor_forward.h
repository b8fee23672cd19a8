#ifndef ACCEL_CLI_EXECUTOR_FORWARD_H_
#define ACCEL_CLI_EXECUTOR_FORWARD_H_

#include <string>

#include "cli/app.h"

namespace accel::cli {

// File name of the LibTorch half of the CLI, installed next to `accel`.
inline constexpr const char* kExecutorBinaryName = "accel-executor";

// `accel run`, `accel calibrate` and `accel worker` are served by `accel-executor` (the only
// binary that loads LibTorch). When argv[1] names one of them, replaces this process with the
// sibling `accel-executor` given the same arguments. Returns normally only when argv[1] is something
// else; otherwise it returns an exit code after printing why the executor could not be started
// (kExitUsage when it is not built, kExitInternal when exec fails).
// Errors are written to `context.err`.
bool ForwardToExecutor(int argc, const char* const* argv, AppContext& context, int* exit_code);

// Registers `run` and `calibrate` entries for `accel --help` (the real commands are parsed by
// accel-executor).
void RegisterRunForwarder(CLI::App& app, AppContext& context);

// The path `accel-executor` would have next to the running binary.
std::string ExecutorBinaryPath();

}  // namespace accel::cli

#endif  // ACCEL_CLI_EXECUTOR_FORWARD_H_
