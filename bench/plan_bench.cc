// Planning time and peak memory versus world size: Llama-2-70B with tp 8 and pp 8 (tp 8 alone
// below 64 ranks) on nodes of 8 H100 80GB, from 8 to 65,536 ranks. Each size is planned in a
// fresh child process so its peak RSS is its own. Prints a table with per-rank ratios, which stay
// flat when time and memory grow linearly in the world size.
//
// Usage: accel_plan_bench [--repeat N] [--verify]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "ir/plan_verifier.h"
#include "ir/plan_writer.h"
#include "planner/planner.h"
#include "spec/loader.h"

namespace {

std::string Spec(int64_t world) {
  const int64_t tp = 8;
  const int64_t pp = world >= 64 ? 8 : 1;
  const int64_t nodes = world / 8;
  return "version: 1\n"
         "name: llama-2-70b-bench\n"
         "model: {arch: llama, hidden_size: 8192, num_layers: 80, num_heads: 64, "
         "num_kv_heads: 8, ffn_hidden_size: 28672, vocab_size: 32000, max_seq_len: 4096}\n"
         "data: {train: {path: tokens.bin, format: tokens}, seq_len: 4096, micro_batch_size: 1}\n"
         "training: {steps: 1000, recompute: selective}\n"
         "precision: {params: bf16, compute: bf16, reduce: fp32}\n"
         "parallel: {data_replicate: auto, tensor: " + std::to_string(tp) +
         ", pipeline: " + std::to_string(pp) + ", sequence_parallel: true}\n"
         "sharding: {stage: 1}\n"
         "cluster: {nodes: " + std::to_string(nodes) +
         ", devices_per_node: 8, device: cuda, device_model: h100-80gb}\n";
}

struct Sample {
  double plan_ms = 0;
  double verify_ms = 0;
  int64_t plan_bytes = 0;
  bool ok = false;
};

Sample RunOnce(int64_t world, int repeat, bool verify) {
  Sample best;
  best.plan_ms = 1e30;
  for (int i = 0; i < repeat; ++i) {
    accel::DiagnosticSink sink;
    accel::SourceManager sources;
    auto t0 = std::chrono::steady_clock::now();
    auto job = accel::spec::LoadJobSpecFromString(Spec(world), "bench.yaml", {}, sink, sources);
    if (!job) {
      std::fprintf(stderr, "%s", accel::RenderText(sink.diagnostics(), sources).c_str());
      return best;
    }
    accel::planner::PlanOptions options;
    options.allow_not_fitting = true;
    accel::planner::PlanResult result = accel::planner::BuildPlan(*job, options, sink);
    auto t1 = std::chrono::steady_clock::now();
    if (!result.ok) {
      std::fprintf(stderr, "%s", accel::RenderText(sink.diagnostics(), sources).c_str());
      return best;
    }
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (ms < best.plan_ms) best.plan_ms = ms;
    best.plan_bytes = static_cast<int64_t>(result.plan.ByteSizeLong());
    best.ok = true;
    if (verify && i == 0) {
      auto v0 = std::chrono::steady_clock::now();
      auto violations = accel::ir::VerifyPlan(result.plan);
      best.verify_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - v0).count();
      if (!violations.empty()) {
        std::fprintf(stderr, "verifier: %s\n", violations[0].c_str());
        best.ok = false;
      }
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  bool verify = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--verify") == 0) verify = true;
  }
  const std::vector<int64_t> worlds = {8, 64, 1024, 16384, 65536};
  std::printf("Llama-2-70B, tp 8 x pp 8 (pp 1 at 8 ranks), H100 80GB nodes of 8; best of %d\n",
              repeat);
  std::printf("%8s %10s %12s %12s %12s %14s%s\n", "ranks", "plan ms", "us/rank", "peak RSS MiB",
              "plan MiB", "plan B/rank", verify ? "   verify ms" : "");
  for (int64_t world : worlds) {
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) return 3;
    pid_t pid = fork();
    if (pid == 0) {
      close(pipe_fd[0]);
      Sample s = RunOnce(world, repeat, verify);
      if (write(pipe_fd[1], &s, sizeof(s)) != sizeof(s)) _exit(3);
      _exit(s.ok ? 0 : 1);
    }
    close(pipe_fd[1]);
    Sample s;
    ssize_t got = read(pipe_fd[0], &s, sizeof(s));
    close(pipe_fd[0]);
    int status = 0;
    struct rusage usage {};
    wait4(pid, &status, 0, &usage);
    if (got != sizeof(s) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%8lld  failed\n", static_cast<long long>(world));
      return 1;
    }
    const double rss_mib = usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
    std::printf("%8lld %10.2f %12.3f %12.1f %12.2f %14.1f", static_cast<long long>(world),
                s.plan_ms, 1000.0 * s.plan_ms / world, rss_mib, s.plan_bytes / 1048576.0,
                static_cast<double>(s.plan_bytes) / world);
    if (verify) std::printf(" %12.2f", s.verify_ms);
    std::printf("\n");
  }
  return 0;
}
