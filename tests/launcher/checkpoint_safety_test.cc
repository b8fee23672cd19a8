// Nothing lost (#42) before launch: which checkpoints of checkpoint.dir belong to another run and
// when this run refuses to write beside them (launcher/checkpoint_dir_check.h), output
// directories that are files or devices (launcher/output_dirs.h), the directory lock
// (launcher/dir_lock.h), and RunJob's pre-launch steps with a fake worker that records its
// environment.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/run_identity.h"
#include "cli/pre_launch_checks.h"
#include "common/exit_codes.h"
#include "launcher/checkpoint_dir_check.h"
#include "launcher/dir_lock.h"
#include "launcher/output_dirs.h"
#include "launcher/run_job.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/common/files.h"
#include "tests/common/temp_dir.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using accel::testing::ReadAll;

class SafetyDir : public accel::testing::TempDir {
 public:
  SafetyDir() : accel::testing::TempDir("accel_checkpoint_safety_test") {}
};

const std::string kOld = std::string(32, 'a');
const std::string kMine = std::string(32, 'b');

// One CPU rank of a tiny GPT-2 with its checkpoints in DIR/ckpt.
ir::Plan TinyPlan(const SafetyDir& dir, const std::vector<std::string>& extra = {}) {
  const std::string yaml = R"(version: 1
name: tiny
model: {arch: gpt2, hidden_size: 32, num_layers: 2, num_heads: 2, vocab_size: 256, max_seq_len: 32}
data:
  train: {path: corpus.txt, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 2
training: {steps: 8}
cluster: {nodes: 1, devices_per_node: 1, device: cpu, device_memory: 1GiB}
)";
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = {"checkpoint.dir=" + dir.File("ckpt")};
  load.overrides.insert(load.overrides.end(), extra.begin(), extra.end());
  auto job = spec::LoadJobSpecFromString(yaml, dir.File("job.yaml"), load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  planner::PlanResult planned = planner::BuildPlan(*job, {}, sink);
  REQUIRE(planned.ok);
  return planned.plan;
}

std::string Publish(const ir::Plan& plan, const std::string& root, const std::string& run_id, int64_t step,
                    const std::string& job = "") {
  CheckpointIdentity identity = IdentityOfPlan(plan, run_id);
  if (!job.empty()) identity.job = job;
  CheckpointStore store(root, 10, identity);
  const std::string state = "{\"step\": " + std::to_string(step) + ", \"data_epoch\": 0, \"data_samples\": 8}";
  return store.Write(step, {{"trainer_state.json", state}, {"model.safetensors", "w"}, {"optimizer.pt", "o"}}).value();
}

std::vector<std::string> Messages(const std::vector<PlanIssue>& issues) {
  std::vector<std::string> out;
  for (const PlanIssue& i : issues) out.push_back(i.code + " " + i.field + ": " + i.message);
  return out;
}

// Issue #42: retraining from scratch (resume: never) into a directory holding an older run's steps.
TEST_CASE("a new run refuses a checkpoint.dir that holds another run's checkpoints", "[launcher][checkpoint_dir]") {
  SafetyDir dir;
  const std::string ckpt = dir.File("ckpt");
  const ir::Plan old_plan = TinyPlan(dir);
  for (int64_t step : {30, 40}) Publish(old_plan, ckpt, kOld, step);
  const ir::Plan never = TinyPlan(dir, {"checkpoint.resume=never"});
  const CheckpointDirScan scan = ScanCheckpointDir(never, ckpt).value();
  CHECK_FALSE(scan.resume.has_value());
  CHECK(Messages(CheckpointDirIssues(never, scan)) ==
        std::vector<std::string>{
            "E0605 checkpoint.dir: checkpoint.dir " + ckpt +
            " holds 2 checkpoints of another run (steps 30, 40; job 'tiny', run aaaaaaaa) and checkpoint.resume is "
            "never: a new run would write its checkpoints beside them, and a later resume or `accel export` could "
            "take either run's; move them away or choose another checkpoint.dir, or set checkpoint.resume: auto to "
            "continue them"});

  // Same when every checkpoint fails its CRC: nothing can be resumed.
  for (const char* step : {"step_00000030", "step_00000040"}) {
    std::ofstream(fs::path(ckpt) / step / "model.safetensors") << "X";
  }
  const ir::Plan automatic = TinyPlan(dir);
  CHECK(Messages(CheckpointDirIssues(automatic, ScanCheckpointDir(automatic, ckpt).value())) ==
        std::vector<std::string>{
            "E0605 checkpoint.dir: checkpoint.dir " + ckpt +
            " holds 2 checkpoints of another run (steps 30, 40; job 'tiny', run aaaaaaaa) and none that job 'tiny' "
            "can resume: a new run would write its checkpoints beside them, and a later resume or `accel export` "
            "could take either run's; move them away or choose another checkpoint.dir"});
}

// Issue #42: two jobs with one checkpoint.dir continued each other's weights.
TEST_CASE("another job's checkpoints are not resumed", "[launcher][checkpoint_dir]") {
  SafetyDir dir;
  const std::string ckpt = dir.File("ckpt");
  const ir::Plan plan = TinyPlan(dir);
  Publish(plan, ckpt, kOld, 40, "other");
  const CheckpointDirScan scan = ScanCheckpointDir(plan, ckpt).value();
  CHECK_FALSE(scan.resume.has_value());
  CHECK(Messages(CheckpointDirIssues(plan, scan)) ==
        std::vector<std::string>{
            "E0605 checkpoint.dir: checkpoint.dir " + ckpt +
            " holds 1 checkpoint of another run (step 40; job 'other', run aaaaaaaa) and none that job 'tiny' can "
            "resume: a new run would write its checkpoints beside them, and a later resume or `accel export` could "
            "take either run's; move them away or choose another checkpoint.dir"});
}

TEST_CASE("a resumed run continues its run id and leaves older checkpoints of other runs in place",
          "[launcher][checkpoint_dir]") {
  SafetyDir dir;
  const std::string ckpt = dir.File("ckpt");
  const ir::Plan plan = TinyPlan(dir);
  Publish(plan, ckpt, kOld, 10);
  Publish(plan, ckpt, kMine, 30);
  const std::string resumed = Publish(plan, ckpt, kMine, 40);
  const CheckpointDirScan scan = ScanCheckpointDir(plan, ckpt).value();
  REQUIRE(scan.resume.has_value());
  CHECK(scan.resume->info.path == resumed);
  CHECK(scan.run_id == kMine);
  CHECK(CheckpointDirIssues(plan, scan).empty());
  CHECK(LeftInPlaceLine(scan) == "checkpoint.dir " + ckpt +
                                     " holds 1 checkpoint of another run (step 10; job 'tiny', run aaaaaaaa), left "
                                     "in place");

  // Another run's newer (unreadable) checkpoint: this run would write the same step numbers.
  const std::string newer = Publish(plan, ckpt, kOld, 50);
  std::ofstream(newer + "/model.safetensors") << "X";
  const CheckpointDirScan clash = ScanCheckpointDir(plan, ckpt).value();
  CHECK(clash.resume->info.path == resumed);
  CHECK(Messages(CheckpointDirIssues(plan, clash)) ==
        std::vector<std::string>{"E0605 checkpoint.dir: checkpoint.dir " + ckpt +
                                 " holds 1 checkpoint of another run (step 50; job 'tiny', run aaaaaaaa), newer than "
                                 "step 40, the one this run resumes: this run would write the same step numbers; "
                                 "move them away or choose another checkpoint.dir"});
}

TEST_CASE("output directories that are files or devices are refused before launch", "[launcher][output_dirs]") {
  SafetyDir dir;
  { std::ofstream(dir.File("file")) << "x"; }
  CHECK(PrepareOutputDir(dir.File("file"), "checkpoint.dir").message() ==
        "checkpoint.dir " + dir.File("file") + " is a regular file, not a directory");
  CHECK(PrepareOutputDir("/dev/null", "checkpoint.dir").message() ==
        "checkpoint.dir /dev/null is a character device, not a directory");
  REQUIRE(::mkfifo(dir.File("fifo").c_str(), 0600) == 0);
  CHECK(PrepareOutputDir(dir.File("fifo"), "run directory").message() ==
        "run directory " + dir.File("fifo") + " is a FIFO, not a directory");
  CHECK(PrepareOutputDir(dir.File("file/sub"), "checkpoint.dir").message() ==
        "cannot create checkpoint.dir " + dir.File("file/sub") + ": Not a directory");
  CHECK(PrepareOutputDir(dir.File("new/deep"), "checkpoint.dir").ok());
  CHECK(fs::is_directory(dir.File("new/deep")));
  fs::create_directory_symlink(dir.File("new"), dir.File("link"));
  CHECK(PrepareOutputDir(dir.File("link"), "checkpoint.dir").ok());
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir.File("ro"));
    fs::permissions(dir.File("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(PrepareOutputDir(dir.File("ro"), "checkpoint.dir").message() ==
          "checkpoint.dir " + dir.File("ro") + " is not writable (Permission denied)");
  }
}

std::string HostName() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return host;
}

TEST_CASE("a locked directory refuses a second holder, a stale lock file does not", "[launcher][lock]") {
  SafetyDir dir;
  const std::string run = dir.File("run");
  fs::create_directories(run);
  // A lock file left by a dead run: nobody holds it.
  { std::ofstream(run + "/.accel.lock") << "pid 1 on host gone\n"; }
  absl::StatusOr<std::unique_ptr<DirLock>> first = DirLock::Acquire(run);
  REQUIRE(first.ok());
  absl::StatusOr<std::unique_ptr<DirLock>> second = DirLock::Acquire(run);
  CHECK(second.status().message() ==
        run + " is in use by accel run pid " + std::to_string(::getpid()) + " on host " + HostName());
  first->reset();
  CHECK(DirLock::Acquire(run).ok());
}

// RunJob with a worker that records ACCEL_RUN_ID; returns the exit code.
struct RunResult {
  int code = 0;
  std::string out, err, run_id;
};

RunResult RunTiny(const SafetyDir& dir, const ir::Plan& plan,
                  std::function<void(const std::vector<PlanIssue>&)> report_issues = nullptr) {
  const std::string worker = dir.File("worker.sh");
  {
    std::ofstream(worker) << "#!/bin/sh\necho \"$ACCEL_RUN_ID\" > " << dir.File("run_id.txt") << "\n";
  }
  fs::permissions(worker, fs::perms::owner_all);
  RunOptions options;
  options.run_dir = dir.File("run");
  options.worker_executable = worker;
  options.grace_period_seconds = 1;
  options.report_issues = std::move(report_issues);
  std::ostringstream out, err;
  const EnvLookup no_env = [](const std::string&) { return std::optional<std::string>(); };
  RunResult r;
  r.code = RunJob(plan, "summary\n", options, no_env, 0, out, err);
  r.out = out.str();
  r.err = err.str();
  if (fs::exists(dir.File("run_id.txt"))) r.run_id = ReadAll(dir.File("run_id.txt"));
  return r;
}

TEST_CASE("accel run checks, locks and resumes before any worker starts", "[launcher][run][checkpoint_dir]") {
  SafetyDir dir;
  const ir::Plan plan = TinyPlan(dir);

  // checkpoint.dir is a file: refused before the run directory is written.
  { std::ofstream(dir.File("ckpt")) << "x"; }
  RunResult file = RunTiny(dir, plan);
  CHECK(file.code == kExitInvalid);
  CHECK(file.err == "error[E0606]: checkpoint.dir: checkpoint.dir " + dir.File("ckpt") +
                        " is a regular file, not a directory\n");
  CHECK_FALSE(fs::exists(dir.File("run/plan.binpb")));
  fs::remove(dir.File("ckpt"));

  // A fresh run draws a run id and passes it to the workers.
  RunResult fresh = RunTiny(dir, plan);
  INFO(fresh.err);
  CHECK(fresh.code == kExitOk);
  CHECK(fresh.run_id.size() == 33);

  // A run that resumes passes the checkpoint's run id on and says what it resumes.
  const std::string resumed = Publish(plan, dir.File("ckpt"), kMine, 4);
  RunResult again = RunTiny(dir, plan);
  CHECK(again.code == kExitOk);
  CHECK(again.run_id == kMine + "\n");
  CHECK_THAT(again.out, Catch::Contains("resume from " + resumed + " (step 4; job 'tiny', run bbbbbbbb, plan " +
                                        PlanHashHex(plan) + "): loads under this layout\n"));
  CHECK_THAT(again.out, Catch::Contains("checkpoints in " + dir.File("ckpt") + " (run bbbbbbbb)\n"));

  // The run directory in use by another run: refused at once.
  absl::StatusOr<std::unique_ptr<DirLock>> held = DirLock::Acquire(dir.File("run"));
  REQUIRE(held.ok());
  RunResult busy = RunTiny(dir, plan);
  CHECK(busy.code == kExitRuntime);
  CHECK(busy.err == "error: " + dir.File("run") + " is in use by accel run pid " + std::to_string(::getpid()) +
                        " on host " + HostName() + "\n");
  held->reset();

  // resume: never into a directory with checkpoints: refused, nothing deleted.
  RunResult never = RunTiny(dir, TinyPlan(dir, {"checkpoint.resume=never"}));
  CHECK(never.code == kExitInvalid);
  CHECK_THAT(never.err, Catch::StartsWith("error[E0605]: checkpoint.dir: checkpoint.dir " + dir.File("ckpt") +
                                          " holds 1 checkpoint of another run (step 4;"));
  CHECK(fs::exists(resumed));
}

// `accel run` hands the launcher a reporter that locates its issues in the job file (the one
// cli/run_command.cc passes).
TEST_CASE("accel run locates a checkpoint.dir refusal in the job file", "[launcher][run][checkpoint_dir]") {
  SafetyDir dir;
  const std::string ckpt = dir.File("ckpt");
  const std::string line = "checkpoint: {dir: " + ckpt + ", resume: never}";
  const std::string yaml = "version: 1\nname: tiny\n"
                           "model: {arch: gpt2, hidden_size: 32, num_layers: 2, num_heads: 2, vocab_size: 256, "
                           "max_seq_len: 32}\n"
                           "data:\n  train: {path: corpus.txt, format: text, tokenizer: bytes}\n  seq_len: 16\n"
                           "  micro_batch_size: 2\ntraining: {steps: 8}\n"
                           "cluster: {nodes: 1, devices_per_node: 1, device: cpu, device_memory: 1GiB}\n" +
                           line + "\n";
  DiagnosticSink sink;
  SourceManager sources;
  auto job = spec::LoadJobSpecFromString(yaml, dir.File("job.yaml"), {}, sink, sources);
  REQUIRE(job.has_value());
  planner::PlanResult planned = planner::BuildPlan(*job, {}, sink);
  REQUIRE(planned.ok);
  Publish(planned.plan, ckpt, kOld, 30);
  std::ostringstream located;
  RunResult refused = RunTiny(dir, planned.plan, cli::LocatedIssueReporter(*job, sources, located));
  CHECK(refused.code == kExitInvalid);
  const size_t column = line.find(ckpt) + 1;
  CHECK(located.str() == dir.File("job.yaml") + ":10:" + std::to_string(column) +
                             ": error[E0605]: checkpoint.dir " + ckpt +
                             " holds 1 checkpoint of another run (step 30; job 'tiny', run aaaaaaaa) and "
                             "checkpoint.resume is never: a new run would write its checkpoints beside them, and a "
                             "later resume or `accel export` could take either run's; move them away or choose "
                             "another checkpoint.dir, or set checkpoint.resume: auto to continue them\n"
                             " " + line + "\n" + std::string(column, ' ') + "^\n");
}

}  // namespace
}  // namespace accel::exec
