// The launcher without LibTorch: supervision of fake workers (/bin/sh commands), the worker
// environment, SLURM and multi-node layouts, and the pre-launch refusals.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/diagnostics.h"
#include "common/remove_tree.h"
#include "tests/common/temp_dir.h"
#include "launcher/fatal_signal.h"
#include "launcher/job_token.h"
#include "launcher/launch_layout.h"
#include "cli/pre_launch_checks.h"
#include "launcher/process_supervisor.h"
#include "launcher/slurm_env.h"
#include "launcher/worker_env.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A fresh directory under the system temporary directory, removed at scope exit.
// Every TempDir here names this test in its path.
class TempDir : public accel::testing::TempDir {
 public:
  TempDir() : accel::testing::TempDir("accel_launcher_test") {}
};

using accel::testing::ReadAll;

ProcessSpec Shell(int rank, const std::string& script, const TempDir& dir,
                  std::vector<std::pair<std::string, std::string>> env = {}) {
  ProcessSpec spec;
  spec.rank = rank;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = std::move(env);
  spec.log_path = dir.File("rank" + std::to_string(rank) + ".log");
  return spec;
}

SupervisorOptions QuietOptions() {
  SupervisorOptions options;
  options.handle_signals = false;
  options.grace = milliseconds(1000);
  options.poll_interval = milliseconds(20);
  return options;
}

bool ProcessGone(pid_t pid) {
  // Gone, or a zombie waiting for init to reap it.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

TEST_CASE("workers get torchrun's environment", "[launcher]") {
  TempDir dir;
  LaunchRequest request;
  request.nodes = 1;
  request.slots = {{0, 0, 0}, {1, 0, 1}};
  request.run_dir = dir.path();
  request.num_threads = 1;
  request.launch_unix_ns = 42;
  auto layout = ResolveLaunchLayout(request);
  REQUIRE(layout.ok());
  CHECK(layout->mode == "single-node");
  CHECK(layout->picked_port);
  REQUIRE(layout->workers.size() == 2);

  std::vector<ProcessSpec> specs;
  for (const WorkerEnv& env : layout->workers) {
    CHECK(env.master_addr == "127.0.0.1");
    specs.push_back(Shell(env.rank, "env | sort", dir, WorkerEnvVariables(env)));
  }
  ProcessSupervisor supervisor(QuietOptions());
  REQUIRE(supervisor.Start(specs).ok());
  SupervisionResult result = supervisor.Wait();
  REQUIRE(result.ok());

  const std::string port = std::to_string(layout->workers[0].master_port);
  for (int rank = 0; rank < 2; ++rank) {
    std::string log = "\n" + ReadAll(dir.File("rank" + std::to_string(rank) + ".log"));
    std::string r = std::to_string(rank);
    CHECK_THAT(log, Catch::Contains("\nRANK=" + r + "\n"));
    CHECK_THAT(log, Catch::Contains("\nLOCAL_RANK=" + r + "\n"));
    CHECK_THAT(log, Catch::Contains("\nWORLD_SIZE=2\n"));
    CHECK_THAT(log, Catch::Contains("\nLOCAL_WORLD_SIZE=2\n"));
    CHECK_THAT(log, Catch::Contains("\nGROUP_RANK=0\n"));
    CHECK_THAT(log, Catch::Contains("\nNODE_RANK=0\n"));
    CHECK_THAT(log, Catch::Contains("\nMASTER_ADDR=127.0.0.1\n"));
    CHECK_THAT(log, Catch::Contains("\nMASTER_PORT=" + port + "\n"));
    CHECK_THAT(log, Catch::Contains("\nACCEL_NUM_THREADS=1\n"));
    CHECK_THAT(log, Catch::Contains("\nOMP_NUM_THREADS=1\n"));
    CHECK_THAT(log, Catch::Contains("\nOPENBLAS_NUM_THREADS=1\n"));
    CHECK_THAT(log, Catch::Contains("\nOMP_WAIT_POLICY=PASSIVE\n"));
    CHECK_THAT(log, Catch::Contains("\nACCEL_RUN_DIR=" + dir.path() + "\n"));
    CHECK_THAT(log, Catch::Contains("\nACCEL_LAUNCH_UNIX_NS=42\n"));
    CHECK_THAT(log, Catch::Contains("\nACCEL_JOB_TOKEN=\n"));
  }
}

TEST_CASE("WorkerEnv round-trips through variables and rejects bad ones", "[launcher]") {
  WorkerEnv env;
  env.rank = 5;
  env.local_rank = 1;
  env.world_size = 8;
  env.local_world_size = 4;
  env.node_rank = 1;
  env.master_addr = "node07";
  env.master_port = 12345;
  env.run_dir = "runs/x";
  env.num_threads = 3;
  env.launch_unix_ns = 1700000000000000000;
  env.job_token = "0123456789abcdef";
  env.store_file = "runs/x/.rendezvous.attempt0";
  std::map<std::string, std::string> vars;
  for (const auto& [name, value] : WorkerEnvVariables(env)) vars[name] = value;
  auto lookup = [&vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  auto back = WorkerEnvFromLookup(lookup);
  REQUIRE(back.ok());
  CHECK(back->rank == 5);
  CHECK(back->local_rank == 1);
  CHECK(back->world_size == 8);
  CHECK(back->local_world_size == 4);
  CHECK(back->node_rank == 1);
  CHECK(back->master_addr == "node07");
  CHECK(back->master_port == 12345);
  CHECK(back->run_dir == "runs/x");
  CHECK(back->num_threads == 3);
  CHECK(back->launch_unix_ns == 1700000000000000000);
  CHECK(back->job_token == "0123456789abcdef");
  CHECK(back->store_file == "runs/x/.rendezvous.attempt0");
  CHECK_FALSE(back->agent_store);  // accel's own launcher: rank 0 serves the store
  CHECK(back->restart_count == 0);

  // torchrun's static rendezvous: its agent serves the store; restarts are counted.
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  vars["TORCHELASTIC_RESTART_COUNT"] = "2";
  back = WorkerEnvFromLookup(lookup);
  REQUIRE(back.ok());
  CHECK(back->agent_store);
  CHECK(back->restart_count == 2);
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  CHECK_FALSE(WorkerEnvFromLookup(lookup)->agent_store);
  vars["TORCHELASTIC_RESTART_COUNT"] = "-1";
  CHECK(WorkerEnvFromLookup(lookup).status().message() ==
        "TORCHELASTIC_RESTART_COUNT=-1 is outside [0, 16777216]");
  vars.erase("TORCHELASTIC_RESTART_COUNT");

  vars["RANK"] = "8";
  CHECK(WorkerEnvFromLookup(lookup).status().message() == "RANK=8 is outside [0, 7]");
  vars["RANK"] = "x1";
  CHECK(WorkerEnvFromLookup(lookup).status().message() == "RANK='x1' is not an integer");
  vars.erase("RANK");
  CHECK(WorkerEnvFromLookup(lookup).status().message() == "RANK is not set");
  vars["RANK"] = "0";
  vars["MASTER_PORT"] = "70000";
  CHECK(WorkerEnvFromLookup(lookup).status().message() == "MASTER_PORT=70000 is outside [1, 65535]");
}

TEST_CASE("a failing worker stops the others and is reported with its log", "[launcher]") {
  TempDir dir;
  std::vector<ProcessSpec> specs = {
      Shell(0, "echo rank0 starting; exec sleep 30", dir),
      Shell(1, "i=0; while [ $i -lt 30 ]; do echo line $i; i=$((i+1)); done; sleep 0.2; "
               "echo 'error: boom' >&2; exit 3",
            dir),
      // Ignores SIGTERM: must be killed after the grace period.
      Shell(2, "trap '' TERM; while true; do sleep 0.05; done", dir),
  };
  auto started = std::chrono::steady_clock::now();
  ProcessSupervisor supervisor(QuietOptions());
  REQUIRE(supervisor.Start(specs).ok());
  SupervisionResult result = supervisor.Wait();
  auto elapsed = std::chrono::steady_clock::now() - started;

  CHECK_FALSE(result.ok());
  REQUIRE(result.first_failure.has_value());
  const ProcessExit& failed = result.exits[*result.first_failure];
  CHECK(failed.rank == 1);
  CHECK(failed.exited);
  CHECK(failed.status == 3);
  CHECK(result.stop_duration < std::chrono::seconds(10));
  CHECK(elapsed < std::chrono::seconds(10));
  CHECK(result.exits[0].stopped_by_us);
  CHECK(result.exits[0].signal == SIGTERM);
  CHECK(result.exits[2].signal == SIGKILL);

  REQUIRE(result.failure_log_tail.size() == 20);
  CHECK(result.failure_log_tail.front() == "line 11");
  CHECK(result.failure_log_tail.back() == "error: boom");

  std::string report = FormatFailureReport(result);
  std::string head = "rank 1 (pid " + std::to_string(failed.pid) +
                     ") exited with status 3; stopped the other 2 workers in ";
  CHECK(report.substr(0, head.size()) == head);
  CHECK_THAT(report, Catch::Contains("rank 2 (pid " + std::to_string(result.exits[2].pid) +
                                     ") was killed by signal 9 (SIGKILL) after being told to "
                                     "stop\n"));
  CHECK_THAT(report, Catch::Contains("last 20 lines of " + dir.File("rank1.log") +
                                     ":\n  | line 11\n"));
  CHECK_THAT(report, Catch::EndsWith("  | line 29\n  | error: boom\n"));
}

TEST_CASE("a worker killed by a signal is named with the signal", "[launcher]") {
  TempDir dir;
  std::vector<ProcessSpec> specs = {
      Shell(0, "exec sleep 30", dir),
      Shell(1, "echo about to die; kill -9 $$", dir),
  };
  ProcessSupervisor supervisor(QuietOptions());
  REQUIRE(supervisor.Start(specs).ok());
  SupervisionResult result = supervisor.Wait();
  REQUIRE(result.first_failure == size_t{1});
  std::string report = FormatFailureReport(result);
  CHECK_THAT(report, Catch::StartsWith("rank 1 (pid " + std::to_string(result.exits[1].pid) +
                                       ") was killed by signal 9 (SIGKILL); stopped the other 1 "
                                       "worker in "));
  CHECK_THAT(report, Catch::EndsWith("last 1 line of " + dir.File("rank1.log") +
                                     ":\n  | about to die\n"));
}

TEST_CASE("a worker dying of a fatal signal writes its call stack and dies of that signal",
          "[launcher]") {
  int err_pipe[2];
  REQUIRE(::pipe(err_pipe) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(err_pipe[1], STDERR_FILENO);
    InstallFatalSignalBacktrace();
    ::raise(SIGSEGV);
    ::_exit(0);  // not reached
  }
  ::close(err_pipe[1]);
  std::string err;
  char buffer[4096];
  for (ssize_t n; (n = ::read(err_pipe[0], buffer, sizeof buffer)) > 0;) err.append(buffer, static_cast<size_t>(n));
  ::close(err_pipe[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  CHECK_THAT(err, Catch::StartsWith("\nfatal signal: Segmentation fault; call stack:\n"));
  CHECK(std::count(err.begin(), err.end(), '\n') >= 3);  // the frames, one per line
}

TEST_CASE("SIGTERM to the launcher stops every worker", "[launcher]") {
  TempDir dir;
  // Rank 0 stops cleanly on SIGTERM (as a worker does at a step boundary); rank 1 has a child
  // of its own that must go too.
  std::vector<ProcessSpec> specs = {
      Shell(0, "trap 'echo stopping cleanly; exit 0' TERM; while true; do sleep 0.05; done", dir),
      Shell(1, "sleep 30 & echo child $!; wait", dir),
  };
  SupervisorOptions options = QuietOptions();
  options.handle_signals = true;
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  ProcessSupervisor supervisor(options);
  REQUIRE(supervisor.Start(specs).ok());
  std::thread killer([] {
    std::this_thread::sleep_for(milliseconds(300));
    ::kill(::getpid(), SIGTERM);
  });
  auto started = std::chrono::steady_clock::now();
  SupervisionResult result = supervisor.Wait();
  killer.join();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(result.interrupted_by == SIGTERM);
  CHECK_FALSE(result.first_failure.has_value());
  CHECK(result.exits[0].stopped_by_us);
  CHECK(result.exits[0].exited);
  CHECK(result.exits[0].status == 0);
  CHECK(result.exits[1].stopped_by_us);
  CHECK_THAT(ReadAll(dir.File("rank0.log")), Catch::Contains("stopping cleanly"));
  std::string log1 = ReadAll(dir.File("rank1.log"));
  REQUIRE(log1.rfind("child ", 0) == 0);
  pid_t grandchild = std::stoi(log1.substr(6));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!ProcessGone(grandchild) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  CHECK(ProcessGone(grandchild));
  CHECK_THAT(FormatFailureReport(result), Catch::StartsWith("interrupted by SIGTERM: stopped 2 "
                                                            "workers in "));
  // The previous handler (Catch2's) is back.
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}

TEST_CASE("workers die when the launcher dies", "[launcher]") {
  TempDir dir;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t launcher = ::fork();
  if (launcher == 0) {
    ::close(fds[0]);
    SupervisorOptions options = QuietOptions();
    ProcessSupervisor supervisor(options);
    if (!supervisor.Start({Shell(0, "exec sleep 30", dir)}).ok()) ::_exit(1);
    pid_t worker = supervisor.pids()[0];
    if (::write(fds[1], &worker, sizeof(worker)) != sizeof(worker)) ::_exit(1);
    supervisor.Wait();
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t worker = 0;
  REQUIRE(::read(fds[0], &worker, sizeof(worker)) == sizeof(worker));
  ::close(fds[0]);
  CHECK_FALSE(ProcessGone(worker));
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ProcessGone(worker) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  CHECK(ProcessGone(worker));
}

TEST_CASE("rank 0's output is echoed line by line", "[launcher]") {
  TempDir dir;
  std::vector<std::string> lines;
  SupervisorOptions options = QuietOptions();
  options.echo_rank = 0;
  options.echo = [&lines](std::string_view line) { lines.emplace_back(line); };
  ProcessSupervisor supervisor(options);
  REQUIRE(supervisor.Start({Shell(0, "echo step 1; sleep 0.1; echo step 2; printf tail", dir),
                            Shell(1, "echo not shown", dir)})
              .ok());
  REQUIRE(supervisor.Wait().ok());
  CHECK(lines == std::vector<std::string>{"step 1\n", "step 2\n", "tail\n"});
}

TEST_CASE("a worker that cannot be started is an error", "[launcher]") {
  TempDir dir;
  ProcessSpec spec;
  spec.rank = 0;
  spec.argv = {dir.File("no-such-binary")};
  spec.log_path = dir.File("rank0.log");
  ProcessSupervisor supervisor(QuietOptions());
  absl::Status status = supervisor.Start({Shell(1, "exec sleep 30", dir), spec});
  CHECK(absl::IsNotFound(status));
  CHECK(status.message() ==
        "rank 0: cannot execute " + dir.File("no-such-binary") + ": No such file or directory");
  for (pid_t pid : supervisor.pids()) CHECK(ProcessGone(pid));
}

EnvLookup MapLookup(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_CASE("SLURM variables and node lists are parsed", "[launcher][slurm]") {
  auto none = SlurmEnvFromLookup(MapLookup({}));
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto slurm = SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "3"},
                                             {"SLURM_NODEID", "1"},
                                             {"SLURM_LOCALID", "1"},
                                             {"SLURM_NTASKS", "4"},
                                             {"SLURM_NNODES", "2"},
                                             {"SLURM_JOB_ID", "123456"},
                                             {"SLURM_JOB_NODELIST", "gpu[07-08]"}}));
  REQUIRE(slurm.ok());
  REQUIRE(slurm->has_value());
  CHECK((*slurm)->proc_id == 3);
  CHECK((*slurm)->node_id == 1);
  CHECK((*slurm)->local_id == 1);
  CHECK((*slurm)->ntasks == 4);
  CHECK((*slurm)->nnodes == 2);
  CHECK((*slurm)->nodelist == "gpu[07-08]");
  CHECK(SlurmDefaultPort("123456") == 10000 + 123456 % 20000);
  CHECK(SlurmDefaultPort("") == 29500);

  CHECK(SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "0"}, {"SLURM_NODEID", "0"},
                                      {"SLURM_LOCALID", "0"}}))
            .status()
            .message() == "SLURM_NTASKS is not set");
  CHECK(SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "4"}, {"SLURM_NODEID", "0"},
                                      {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "4"}}))
            .status()
            .message() == "SLURM_PROCID=4 is not below SLURM_NTASKS=4");
  CHECK(SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "x"}})).status().message() ==
        "SLURM_PROCID='x' is not a non-negative integer");
  // Found with fuzz/launcher_env_fuzzer (fuzz/regressions/launcher_env_fuzzer): values were cast to
  // int, so 4294967296 was read as task 0 of 1.
  CHECK(SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "4294967296"}, {"SLURM_NODEID", "0"},
                                      {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "1"}}))
            .status()
            .message() == "SLURM_PROCID='4294967296' is out of range (at most 2147483647)");
  CHECK(SlurmEnvFromLookup(MapLookup({{"SLURM_PROCID", "0"}, {"SLURM_NODEID", "0"},
                                      {"SLURM_LOCALID", "0"}, {"SLURM_NPROCS", "2147483648"}}))
            .status()
            .message() == "SLURM_NPROCS='2147483648' is out of range (at most 2147483647)");

  CHECK(*FirstHostOfNodeList("node[07-09,12],gpu1") == "node07");
  CHECK(*FirstHostOfNodeList("gpu-a[3]") == "gpu-a3");
  CHECK(*FirstHostOfNodeList("host1,host2") == "host1");
  CHECK(*FirstHostOfNodeList("single") == "single");
  CHECK(*FirstHostOfNodeList("n[001-004]-ib") == "n001-ib");
  CHECK_FALSE(FirstHostOfNodeList("node[1-2").ok());
  CHECK_FALSE(FirstHostOfNodeList("").ok());
}

// Two nodes, two ranks each, placed like the planner does (node-major).
LaunchRequest TwoByTwo() {
  LaunchRequest request;
  request.nodes = 2;
  request.slots = {{0, 0, 0}, {1, 0, 1}, {2, 1, 0}, {3, 1, 1}};
  return request;
}

TEST_CASE("SLURM: one task per node starts that node's workers", "[launcher][slurm]") {
  LaunchRequest request = TwoByTwo();
  SlurmEnv slurm;
  slurm.proc_id = 1;
  slurm.node_id = 1;
  slurm.local_id = 0;
  slurm.ntasks = 2;
  slurm.nnodes = 2;
  slurm.job_id = "77";
  slurm.nodelist = "gpu[07-08]";
  request.slurm = slurm;
  auto layout = ResolveLaunchLayout(request);
  REQUIRE(layout.ok());
  CHECK(layout->mode == "slurm: one task per node");
  CHECK(layout->node_rank == 1);
  REQUIRE(layout->workers.size() == 2);
  CHECK(layout->workers[0].rank == 2);
  CHECK(layout->workers[0].local_rank == 0);
  CHECK(layout->workers[1].rank == 3);
  CHECK(layout->workers[1].local_rank == 1);
  CHECK(layout->workers[1].local_world_size == 2);
  CHECK(layout->workers[1].world_size == 4);
  CHECK(layout->workers[1].node_rank == 1);
  CHECK(layout->workers[1].master_addr == "gpu07");
  CHECK(layout->workers[1].master_port == 10077);
}

TEST_CASE("SLURM: one task per device runs as that single worker", "[launcher][slurm]") {
  LaunchRequest request = TwoByTwo();
  SlurmEnv slurm;
  slurm.proc_id = 2;
  slurm.node_id = 1;
  slurm.local_id = 0;
  slurm.ntasks = 4;
  slurm.nnodes = 2;
  slurm.nodelist = "a1,a2";
  request.slurm = slurm;
  request.master_port = 4000;
  auto layout = ResolveLaunchLayout(request);
  REQUIRE(layout.ok());
  CHECK(layout->mode == "slurm: one task per device");
  REQUIRE(layout->workers.size() == 1);
  CHECK(layout->workers[0].rank == 2);
  CHECK(layout->workers[0].local_rank == 0);
  CHECK(layout->workers[0].local_world_size == 2);
  CHECK(layout->workers[0].master_addr == "a1");
  CHECK(layout->workers[0].master_port == 4000);

  slurm.ntasks = 3;
  slurm.proc_id = 0;
  slurm.node_id = 0;
  request.slurm = slurm;
  CHECK(ResolveLaunchLayout(request).status().message() ==
        "SLURM_NTASKS=3 matches neither the plan's world size 4 (one task per device) nor its "
        "node count 2 (one task per node)");
}

TEST_CASE("multi-node by hand needs --node-rank and --master-addr", "[launcher]") {
  LaunchRequest request = TwoByTwo();
  CHECK(ResolveLaunchLayout(request).status().message() ==
        "the plan spans 2 nodes: start `accel run` on each node with --node-rank K (0..1) and "
        "--master-addr HOST, or under SLURM with srun");
  request.node_rank = 1;
  CHECK(ResolveLaunchLayout(request).status().message() ==
        "--master-addr is required with --node-rank: the host of node 0, reachable from every "
        "node");
  request.master_addr = "10.0.0.1";
  auto layout = ResolveLaunchLayout(request);
  REQUIRE(layout.ok());
  CHECK(layout->mode == "multi-node");
  CHECK(layout->workers.size() == 2);
  CHECK(layout->workers[0].rank == 2);
  CHECK(layout->workers[0].master_port == 29500);
  request.node_rank = 2;
  CHECK(ResolveLaunchLayout(request).status().message() ==
        "--node-rank 2 is outside the plan's nodes 0..1");
}

// A valid four-rank CPU job; each test changes it with --set or by editing lines.
constexpr const char* kCpuJob = R"(version: 1
name: tiny
model:
  arch: gpt2
  hidden_size: 32
  num_layers: 2
  num_heads: 2
  vocab_size: 256
  max_seq_len: 32
data:
  train: {path: corpus.txt, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 2
training:
  steps: 2
parallel: {data_replicate: auto, data_shard: 1, tensor: 1}
sharding: {stage: 0}
cluster: {nodes: 1, devices_per_node: 4, device: cpu, device_memory: 1GiB}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// Loads yaml (as "job.yaml" in dir) with overrides, plans it, runs the executor checks and
// returns their errors rendered as `accel run` prints them.
std::string Refusals(const std::string& yaml, const std::vector<std::string>& overrides,
                     const TempDir& dir, bool cuda = false, bool sdpa = true) {
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  auto job = spec::LoadJobSpecFromString(yaml, dir.File("job.yaml"), load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  planner::PlanResult planned = planner::BuildPlan(*job, {}, sink);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(planned.ok);
  DiagnosticSink checks;
  cli::CheckBeforeLaunch(planned.plan, *job, ExecutorCapabilities{cuda, sdpa}, checks);
  return RenderText(checks.diagnostics(), sources);
}

TEST_CASE("plans the executor cannot run are refused before launch", "[launcher][refusal]") {
  TempDir dir;
  { std::ofstream(dir.File("corpus.txt")) << "hello world\n"; }
  const std::string job = dir.File("job.yaml");

  CHECK(Refusals(kCpuJob, {}, dir) == "");

  std::string sharded = Replace(kCpuJob, "sharding: {stage: 0}", "sharding: {stage: 3}");
  sharded = Replace(sharded, "data_replicate: auto, data_shard: 1",
                    "data_replicate: 1, data_shard: 4");
  // Every sharding stage runs, with the optimizer offloaded too.
  CHECK(Refusals(sharded, {}, dir) == "");
  CHECK(Refusals(sharded, {"sharding.offload=optimizer"}, dir) == "");

  // Tensor parallelism runs, with and without sequence parallelism.
  CHECK(Refusals(kCpuJob, {"parallel.tensor=2"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.tensor=2", "parallel.sequence_parallel=true"}, dir) == "");
  // Pipeline parallelism runs, alone and in 3D, and so does context parallelism, both methods.
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2", "parallel.tensor=2"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2", "parallel.context=2"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.context=2", "parallel.context_method=ulysses"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"precision.reduce=fp16"}, dir) ==
        "--set precision.reduce=fp16: error[E0601]: precision.reduce fp16 is not supported by the "
        "executor yet (supported: fp32, bf16)\n");
  // The zero-bubble schedules run at sharding stages 0 and 1.
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2", "parallel.pipeline_schedule=zb_h1"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2", "parallel.pipeline_schedule=zbv", "model.num_layers=4"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"parallel.pipeline=2", "parallel.pipeline_schedule=zb_h1", "sharding.stage=2"}, dir) ==
        "--set parallel.pipeline_schedule=zb_h1: error[E0601]: parallel.pipeline_schedule zb_h1 with sharding.stage 2 "
        "is not supported by the executor yet (supported: sharding.stage 0 or 1)\n");

  std::string gpu = Replace(kCpuJob, "device: cpu, device_memory: 1GiB",
                            "device: cuda, device_memory: 8GiB");
  CHECK(Refusals(gpu, {}, dir) ==
        job + ":18:50: error[E0601]: cluster.device cuda is not supported by this build of the "
              "executor (LibTorch without CUDA; supported: cpu)\n"
              " cluster: {nodes: 1, devices_per_node: 4, device: cuda, device_memory: 8GiB}\n"
              "                                                  ^\n");
  CHECK(Refusals(gpu, {}, dir, /*cuda=*/true) == "");
  // The planner names SDPA for cuda; a LibTorch before 2.0 has no such kernel.
  CHECK(Refusals(gpu, {}, dir, /*cuda=*/true, /*sdpa=*/false) ==
        job + ":18:50: error[E0601]: the plan's attention kernel (sdpa, chosen for cluster.device "
              "cuda) needs LibTorch's scaled_dot_product_attention (2.0 and later), which this "
              "build of the executor lacks\n"
              " cluster: {nodes: 1, devices_per_node: 4, device: cuda, device_memory: 8GiB}\n"
              "                                                  ^\n");

  // Gradients are reduced in fp32 or bf16 and autocast runs in fp32 or bf16, and in fp16 (with
  // loss scaling) on CUDA: anything else is refused, never silently run in another precision.
  CHECK(Refusals(kCpuJob, {"precision.reduce=bf16"}, dir) == "");
  CHECK(Refusals(kCpuJob, {"precision.params=fp16"}, dir) ==
        "--set precision.params=fp16: error[E0601]: precision.params fp16 is not supported by "
        "the executor yet (supported: fp32, bf16)\n");
  CHECK(Refusals(kCpuJob, {"precision.compute=fp16", "precision.loss_scaling=dynamic"}, dir) ==
        "--set precision.compute=fp16: error[E0601]: precision.compute fp16 needs a CUDA device: "
        "LibTorch's CPU kernels have no fp16 matrix multiply (supported on cpu: fp32, bf16)\n");
  CHECK(Refusals(gpu, {"precision.compute=fp16", "precision.loss_scaling=dynamic"}, dir,
                 /*cuda=*/true) == "");

  // Mixture-of-experts blocks run, token dropping too.
  const std::vector<std::string> llama = {"model.arch=llama", "model.ffn_hidden_size=64"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), llama.begin(), llama.end());
    return more;
  };
  CHECK(Refusals(kCpuJob, with({}), dir) == "");
  CHECK(Refusals(kCpuJob,
                 with({"model.moe.num_experts=4", "model.moe.experts_per_token=2",
                       "model.moe.expert_ffn_size=32"}),
                 dir) == "");
  CHECK(Refusals(kCpuJob,
                 with({"model.moe.num_experts=4", "model.moe.experts_per_token=2",
                       "model.moe.expert_ffn_size=32", "model.moe.capacity_factor=1.25"}),
                 dir) == "");
  // Qwen3's attention: per-head q/k norms and a head width apart from hidden_size / num_heads.
  CHECK(Refusals(kCpuJob, with({"model.qk_norm=true", "model.head_dim=32"}), dir) == "");
}

TEST_CASE("phi3's fused projections are refused with per-op recompute and with tp over fewer kv heads",
          "[launcher][refusal]") {
  TempDir dir;
  { std::ofstream(dir.File("corpus.txt")) << "hello world\n"; }
  {
    std::ofstream(dir.File("phi3.json"))
        << R"({"model_type": "phi3", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 32,
               "vocab_size": 256, "rms_norm_eps": 1e-05, "rope_theta": 10000.0})";
  }
  const std::string phi3 = Replace(kCpuJob, "  arch: gpt2\n  hidden_size: 32\n  num_layers: 2\n  num_heads: 2\n"
                                            "  vocab_size: 256\n  max_seq_len: 32\n",
                                   "  config: phi3.json\n");
  CHECK(Refusals(phi3, {}, dir) == "");
  CHECK(Refusals(phi3, {"training.recompute=op"}, dir) ==
        "--set training.recompute=op: error[E0601]: training.recompute op with phi3's fused qkv_proj and "
        "gate_up_proj is not supported by the executor yet (supported: none, selective, full)\n");
  CHECK(Refusals(phi3, {"parallel.tensor=2"}, dir) ==
        "--set parallel.tensor=2: error[E0601]: parallel.tensor 2 with phi3's fused qkv_proj and 2 key/value "
        "heads of 4 is not supported by the executor yet (supported: tensor 1, or num_kv_heads = num_heads)\n");
}

// Gemma's scaled, soft-capped, windowed scores are not in context-parallel attention; it still
// plans. OLMo 2 (full-width q/k norms) runs under tensor and pipeline parallelism.
TEST_CASE("gemma2 is refused under context parallelism, olmo2 runs under tensor parallelism", "[launcher][refusal]") {
  TempDir dir;
  { std::ofstream(dir.File("corpus.txt")) << "hello world\n"; }
  const std::string dims = R"("hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 32, "vocab_size": 256)";
  std::ofstream(dir.File("olmo2.json")) << R"({"model_type": "olmo2", )" << dims << "}";
  std::ofstream(dir.File("gemma2.json")) << R"({"model_type": "gemma2", "head_dim": 16, )" << dims << "}";
  auto with_config = [&](const char* file) {
    return Replace(kCpuJob, "  arch: gpt2\n  hidden_size: 32\n  num_layers: 2\n  num_heads: 2\n"
                            "  vocab_size: 256\n  max_seq_len: 32\n",
                   std::string("  config: ") + file + "\n");
  };
  const std::string olmo2 = with_config("olmo2.json"), gemma2 = with_config("gemma2.json");
  CHECK(Refusals(olmo2, {}, dir) == "");
  CHECK(Refusals(olmo2, {"parallel.pipeline=2"}, dir) == "");
  CHECK(Refusals(olmo2, {"parallel.tensor=2"}, dir) == "");
  CHECK(Refusals(gemma2, {}, dir) == "");
  CHECK(Refusals(gemma2, {"parallel.tensor=2", "parallel.sequence_parallel=true"}, dir) == "");
  CHECK(Refusals(gemma2, {"parallel.context=2"}, dir) ==
        "--set parallel.context=2: error[E0601]: parallel.context 2 with gemma2's attention scores "
        "(query_pre_attn_scalar, soft-capping, sliding window) is not supported by the executor yet "
        "(supported: context 1)\n");
}

TEST_CASE("model.init_from that cannot start the plan is refused before launch",
          "[launcher][refusal]") {
  TempDir dir;
  { std::ofstream(dir.File("corpus.txt")) << "hello world\n"; }
  CHECK(Refusals(kCpuJob, {"model.init_from=weights"}, dir) ==
        "--set model.init_from=weights: error[E0602]: cannot start from " + dir.File("weights") +
            ": " + dir.File("weights") + " does not exist\n");
  fs::create_directory(dir.File("weights"));
  CHECK(Refusals(kCpuJob, {"model.init_from=weights"}, dir) ==
        "--set model.init_from=weights: error[E0602]: cannot start from " + dir.File("weights") +
            ": " + dir.File("weights") +
            " holds neither model.safetensors nor model.safetensors.index.json\n");
}

TEST_CASE("a tokenizer file that does not load or does not fit the vocabulary is refused before launch",
          "[launcher][refusal]") {
  TempDir dir;
  { std::ofstream(dir.File("corpus.txt")) << "hello world\n"; }
  const std::string job = dir.File("job.yaml");
  const std::string tokenizer = dir.File("tokenizer.json");
  const std::string with_file = Replace(kCpuJob, "tokenizer: bytes", "tokenizer: tokenizer.json");
  const std::string line = "   train: {path: corpus.txt, format: text, tokenizer: tokenizer.json}\n"
                           "                                                      ^\n";
  CHECK(Refusals(with_file, {}, dir) ==
        job + ":11:54: error[E0603]: cannot load tokenizer: tokenizer file does not exist: " + tokenizer + "\n" +
            line);

  // tiny_bpe.json: 256 byte tokens, 17 merges and 3 added tokens, ids 0..275.
  fs::copy_file(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/tiny_bpe.json", tokenizer);
  CHECK(Refusals(with_file, {}, dir) ==
        job + ":11:54: error[E0603]: " + tokenizer + " has 276 token ids (added and special tokens "
              "included) but model.vocab_size is 256\n" + line +
              job + ":8:15: note: vocab_size set here\n"
              "note: set model.vocab_size to at least 276, or use a tokenizer with at most 256 ids\n");
  CHECK(Refusals(with_file, {"model.vocab_size=276"}, dir) == "");

  // The vocabulary of a model config.json: the tokenizer belongs to another model.
  { std::ofstream(dir.File("config.json")) << R"({"model_type": "gpt2", "vocab_size": 256, "n_embd": 32,
 "n_layer": 2, "n_head": 2, "n_positions": 32})"; }
  const std::string with_config = Replace(with_file, "  vocab_size: 256\n", "  config: config.json\n");
  CHECK(Refusals(with_config, {}, dir) ==
        job + ":11:54: error[E0603]: " + tokenizer + " has 276 token ids (added and special tokens "
              "included) but model.vocab_size is 256\n" + line +
              dir.File("config.json") + ":1:38: note: vocab_size set here\n"
              "note: the tokenizer does not belong to the model of " + dir.File("config.json") +
              ": use that model's own tokenizer file\n");

  // The kind comes from the name; the content must agree.
  fs::copy_file(tokenizer, dir.File("tokenizer.model"));
  CHECK(Refusals(Replace(kCpuJob, "tokenizer: bytes", "tokenizer: tokenizer.model"), {"model.vocab_size=276"}, dir) ==
        job + ":11:54: error[E0603]: cannot load tokenizer: " + dir.File("tokenizer.model") +
              ": planned as sentencepiece but the file is tokenizer.json (BPE, byte-level, 276 ids)\n"
              "   train: {path: corpus.txt, format: text, tokenizer: tokenizer.model}\n"
              "                                                      ^\n");
}

TEST_CASE("missing or empty training data is refused before launch", "[launcher][refusal]") {
  TempDir dir;
  const std::string job = dir.File("job.yaml");
  CHECK(Refusals(kCpuJob, {}, dir) ==
        job + ":11:17: error[E0001]: training data does not exist: " + dir.File("corpus.txt") +
              "\n"
              "   train: {path: corpus.txt, format: text, tokenizer: bytes}\n"
              "                 ^\n");
  { std::ofstream(dir.File("corpus.txt")); }
  CHECK_THAT(Refusals(kCpuJob, {}, dir),
             Catch::StartsWith(job + ":11:17: error[E0001]: training data is empty: " +
                               dir.File("corpus.txt") + "\n"));
  fs::remove(dir.File("corpus.txt"));
  fs::create_directory(dir.File("corpus.txt"));
  { std::ofstream(dir.File("corpus.txt/empty.txt")); }
  CHECK_THAT(Refusals(kCpuJob, {}, dir),
             Catch::StartsWith(job + ":11:17: error[E0001]: training data directory has no "
                               "non-empty files: " + dir.File("corpus.txt") + "\n"));
  { std::ofstream(dir.File("corpus.txt/text.txt")) << "some text\n"; }
  CHECK(Refusals(kCpuJob, {}, dir) == "");
}

TEST_CASE("a worker stopped by a signal is named as the hung peer and killed at once",
          "[launcher][fault]") {
  TempDir dir;
  // Rank 1 stops itself (as `kill -STOP` from outside would); rank 0 then fails the way a
  // collective timeout fails it.
  std::vector<ProcessSpec> specs = {
      Shell(0, "sleep 0.5; echo 'error: rank 0: all-reduce timed out' >&2; exit 4", dir),
      Shell(1, "kill -STOP $$; exec sleep 30", dir),
  };
  SupervisorOptions options = QuietOptions();
  options.grace = milliseconds(5000);
  ProcessSupervisor supervisor(options);
  REQUIRE(supervisor.Start(specs).ok());
  const pid_t stopped_pid = supervisor.pids()[1];
  SupervisionResult result = supervisor.Wait();
  REQUIRE(result.first_failure == size_t{0});
  REQUIRE(result.hung == size_t{1});
  CHECK(result.exits[1].stop_signal == SIGSTOP);
  CHECK(result.exits[1].stopped_for > milliseconds(200));
  CHECK(result.exits[1].signal == SIGKILL);
  // Killed without waiting out the 5 s grace period (it could not act on SIGTERM).
  CHECK(result.stop_duration < milliseconds(1000));
  CHECK(ProcessGone(stopped_pid));
  const std::string report = FormatFailureReport(result);
  const std::string head = "rank 1 (pid " + std::to_string(stopped_pid) +
                           ") hung: stopped by signal 19 (SIGSTOP) for 0.";
  CHECK(report.substr(0, head.size()) == head);
  CHECK_THAT(report, Catch::Contains(" s, so its peers' collectives timed out waiting for it\n"
                                     "rank 0 (pid " + std::to_string(result.exits[0].pid) +
                                     ") exited with status 4; stopped the other 1 worker in "));
  CHECK_THAT(report, Catch::EndsWith("last 1 line of " + dir.File("rank0.log") +
                                     ":\n  | error: rank 0: all-reduce timed out\n"));
  // The hung worker is named once, not again as killed after being told to stop.
  CHECK_THAT(report, !Catch::Contains("after being told to stop"));
}

TEST_CASE("a worker stopped and continued before the failure is not blamed", "[launcher][fault]") {
  TempDir dir;
  std::vector<ProcessSpec> specs = {
      Shell(0, "sleep 0.6; exit 4", dir),
      Shell(1, "exec sleep 30", dir),
  };
  ProcessSupervisor supervisor(QuietOptions());
  REQUIRE(supervisor.Start(specs).ok());
  std::thread poke([pid = supervisor.pids()[1]] {
    ::kill(pid, SIGSTOP);
    std::this_thread::sleep_for(milliseconds(200));
    ::kill(pid, SIGCONT);
  });
  SupervisionResult result = supervisor.Wait();
  poke.join();
  CHECK(result.first_failure == size_t{0});
  CHECK_FALSE(result.hung.has_value());
  CHECK_THAT(FormatFailureReport(result), Catch::StartsWith("rank 0 (pid "));
}

TEST_CASE("a log path that is a symbolic link is refused, its target untouched",
          "[launcher][containment]") {
  TempDir dir;
  std::ofstream(dir.File("outside.txt")) << "precious\n";
  fs::create_symlink(dir.File("outside.txt"), dir.File("rank0.log"));
  ProcessSupervisor supervisor(QuietOptions());
  absl::Status started = supervisor.Start({Shell(0, "echo overwritten", dir)});
  CHECK(started.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(started.message() == "rank 0: refusing to write " + dir.File("rank0.log") +
                                 ": it is a symbolic link (accel does not follow links when "
                                 "writing into run and checkpoint directories)");
  CHECK(ReadAll(dir.File("outside.txt")) == "precious\n");
}

TEST_CASE("a single-node job meets on loopback only", "[launcher][rendezvous]") {
  LaunchRequest request;
  request.nodes = 1;
  request.slots = {{0, 0, 0}, {1, 0, 1}};
  for (const std::string addr : {"127.0.0.1", "localhost", "127.0.1.1", "::1"}) {
    INFO(addr);
    request.master_addr = addr;
    request.master_port = 29500;
    auto layout = ResolveLaunchLayout(request);
    REQUIRE(layout.ok());
    CHECK(layout->workers[0].master_addr == addr);
  }
  request.master_addr = "10.0.0.1";
  CHECK(ResolveLaunchLayout(request).status().message() ==
        "a single-node job meets on loopback: master address '10.0.0.1' (--master-addr or "
        "MASTER_ADDR) is not a loopback address; omit it or use 127.0.0.1");
}

TEST_CASE("every launch gets a job token the workers compare", "[launcher][rendezvous]") {
  std::map<std::string, std::string> vars;
  auto lookup = [&vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  LaunchLayout single;
  single.mode = "single-node";
  auto first = JobTokenFor(single, "", "0x1a2b3c4d", lookup);
  auto second = JobTokenFor(single, "", "0x1a2b3c4d", lookup);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->size() == 32);
  CHECK(first->find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(*first != *second);

  LaunchLayout by_hand;
  by_hand.mode = "multi-node";
  CHECK(JobTokenFor(by_hand, "", "0x1a2b3c4d", lookup).value() == "plan-0x1a2b3c4d");
  LaunchLayout slurm;
  slurm.mode = "slurm: one task per node";
  CHECK(JobTokenFor(slurm, "4242", "0x1a2b3c4d", lookup).value() == "slurm-4242");
  CHECK(JobTokenFor(slurm, "", "0x1a2b3c4d", lookup).value() == "plan-0x1a2b3c4d");

  vars["ACCEL_JOB_TOKEN"] = "shared-secret";
  CHECK(JobTokenFor(single, "", "0x1a2b3c4d", lookup).value() == "shared-secret");
  CHECK(JobTokenFor(by_hand, "", "0x1a2b3c4d", lookup).value() == "shared-secret");
  CHECK(JobTokenFor(slurm, "4242", "0x1a2b3c4d", lookup).value() == "shared-secret");
  vars["ACCEL_JOB_TOKEN"] = "";
  CHECK(JobTokenFor(single, "", "0x1a2b3c4d", lookup).status().message() == "ACCEL_JOB_TOKEN is empty");
}

}  // namespace
}  // namespace accel::exec
