#include "cli/executor_forward.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/exit_codes.h"

namespace accel::cli {

std::string ExecutorBinaryPath() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return kExecutorBinaryName;
  return (self.parent_path() / kExecutorBinaryName).string();
}

bool ForwardToExecutor(int argc, const char* const* argv, AppContext& context, int* exit_code) {
  if (argc < 2) return false;
  const std::string command = argv[1];
  if (command != "run" && command != "worker" && command != "calibrate") return false;
  const std::string path = ExecutorBinaryPath();
  if (::access(path.c_str(), X_OK) != 0) {
    *context.err << "error: accel " << command << " needs the LibTorch executor, which this "
                 << "build does not have (" << path << " is missing); install libtorch-dev and "
                 << "rebuild with -DACCEL_WITH_TORCH=ON\n";
    *exit_code = kExitUsage;
    return true;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(path.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(const_cast<char*>(argv[i]));
  args.push_back(nullptr);
  context.out->flush();
  context.err->flush();
  ::execv(path.c_str(), args.data());
  *context.err << "internal error: cannot start " << path << ": " << std::strerror(errno) << "\n";
  *exit_code = kExitInternal;
  return true;
}

void RegisterRunForwarder(CLI::App& app, AppContext& context) {
  if (::access(ExecutorBinaryPath().c_str(), X_OK) != 0) return;
  CLI::App* sub = app.add_subcommand(
      "run", "Compile a job spec and train it: one worker process per local device (accel run "
             "--help for its options)");
  sub->allow_extras();
  // Reached only if ForwardToExecutor did not take the call, which main.cc prevents.
  sub->callback([&context] { context.exit_code = kExitInternal; });
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "Measure this machine and write a device profile for cluster.device_profile "
                   "(accel calibrate --help for its options)");
  calibrate->allow_extras();
  calibrate->callback([&context] { context.exit_code = kExitInternal; });
}

}  // namespace accel::cli
