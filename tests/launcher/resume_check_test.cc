// Whether a checkpoint continues under a plan (launcher/resume_check.h, `accel plan
// --resume-from`): reshards, precision and optimizer changes, the data position, the global batch,
// and the located errors for another model. Checkpoints are written by the torch-free store with
// the identity a worker would record; their tensor files are placeholders (only manifests,
// layouts and trainer_state.json are read).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/run_identity.h"
#include "cli/plan_command.h"
#include "common/diagnostics.h"
#include "launcher/resume_check.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/common/temp_dir.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

class TempDir : public accel::testing::TempDir {
 public:
  TempDir() : accel::testing::TempDir("accel_resume_check_test") {}
};

const std::string kRun = std::string(32, 'a');

// Four CPU ranks of a tiny GPT-2; tests change it with --set.
constexpr const char* kJob = R"(version: 1
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
  steps: 8
parallel: {data_replicate: auto, data_shard: 1, tensor: 1}
sharding: {stage: 0}
cluster: {nodes: 1, devices_per_node: 4, device: cpu, device_memory: 1GiB}
)";

ir::Plan PlanOf(const TempDir& dir, const std::vector<std::string>& overrides) {
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  auto job = spec::LoadJobSpecFromString(kJob, dir.File("job.yaml"), load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  planner::PlanResult planned = planner::BuildPlan(*job, {}, sink);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(planned.ok);
  return planned.plan;
}

// Publishes step under root as a worker of plan would: the single-file or the sharded format.
std::string WriteCheckpoint(const std::string& root, const ir::Plan& plan, int64_t step) {
  CheckpointStore store(root, 10, IdentityOfPlan(plan, kRun));
  std::vector<CheckpointFile> files = {
      {"trainer_state.json", "{\"step\": " + std::to_string(step) + ", \"data_epoch\": 0, \"data_samples\": 64}\n"}};
  if (store.identity().layout["format"] == "single") {
    files.push_back({"model.safetensors", "weights"});
    files.push_back({"optimizer.pt", "state"});
  } else {
    files.push_back({"shard-00000-of-00001.safetensors", "shard"});
  }
  return store.Write(step, files).value();
}

struct Checked {
  ResumeReport report;
  std::string text;
  std::vector<std::string> errors;  // "FIELD: MESSAGE"
};

Checked Check(const TempDir& dir, const std::vector<std::string>& then, const std::vector<std::string>& now) {
  const std::string ckpt = WriteCheckpoint(dir.File("ckpt"), PlanOf(dir, then), 4);
  absl::StatusOr<ResumeReport> report = CheckResume(PlanOf(dir, now), ckpt);
  REQUIRE(report.ok());
  Checked out{*report, ResumeReportText(*report), {}};
  for (const PlanIssue& i : report->errors) out.errors.push_back(i.field + ": " + i.message);
  for (const PlanIssue& i : report->warnings) out.errors.push_back("warning " + i.field + ": " + i.message);
  return out;
}

TEST_CASE("a checkpoint of the same layout loads with everything carried over", "[launcher][resume]") {
  TempDir dir;
  const Checked c = Check(dir, {}, {});
  const std::string ckpt = dir.File("ckpt/step_00000004");
  CHECK(c.errors.empty());
  CHECK(c.text == "resume from " + ckpt + " (step 4; job 'tiny', run aaaaaaaa, plan " + PlanHashHex(PlanOf(dir, {})) +
                      "): loads under this layout\n"
                      "  resharded: nothing (same layout)\n"
                      "  carried over: parameters; optimizer state (adamw); data position (epoch 0 after 64 windows)\n"
                      "  lost: nothing\n");
}

TEST_CASE("data, tensor and pipeline degrees and the sharding stage reshard", "[launcher][resume]") {
  TempDir dir;
  const std::vector<std::string> batch = {"data.global_batch_size=8"};
  std::vector<std::string> then = batch, now = batch;
  then.insert(then.end(), {"parallel.data_replicate=1", "parallel.data_shard=4", "sharding.stage=1"});
  now.insert(now.end(), {"parallel.tensor=2", "parallel.pipeline=2"});
  const Checked c = Check(dir, then, now);
  CHECK(c.errors.empty());
  CHECK(c.report.resharded == std::vector<std::string>{"parallel.data_shard 4 -> 1", "parallel.tensor 1 -> 2",
                                                        "parallel.pipeline 1 -> 2", "sharding.stage 1 -> 0"});
}

TEST_CASE("the expert degree reshards a mixture of experts", "[launcher][resume]") {
  TempDir dir;
  const std::vector<std::string> moe = {
      "model.arch=llama",          "model.ffn_hidden_size=64",     "model.moe.num_experts=4",
      "model.moe.experts_per_token=2", "model.moe.expert_ffn_size=64", "parallel.data_replicate=1",
      "parallel.data_shard=4",     "sharding.stage=1"};
  std::vector<std::string> now = moe;
  now.push_back("parallel.expert=2");
  const Checked c = Check(dir, moe, now);
  CHECK(c.errors.empty());
  CHECK(c.report.resharded == std::vector<std::string>{"parallel.expert 1 -> 2"});
}

TEST_CASE("a precision change reshards, another optimizer loses its state", "[launcher][resume]") {
  TempDir dir;
  const Checked bf16 = Check(dir, {"sharding.stage=1"}, {"sharding.stage=1", "precision.params=bf16",
                                                         "precision.compute=bf16"});
  CHECK(bf16.errors.empty());
  CHECK(bf16.report.resharded == std::vector<std::string>{"precision.params fp32 -> bf16"});
  TempDir other;
  const Checked sgd = Check(other, {"sharding.stage=1"}, {"sharding.stage=1", "training.optimizer.name=sgd"});
  CHECK(sgd.errors.empty());
  CHECK(sgd.report.lost == std::vector<std::string>{"optimizer state: the checkpoint's is adamw's; sgd starts from "
                                                    "zero state"});
}

TEST_CASE("another seq_len or corpus loses the data position", "[launcher][resume]") {
  TempDir dir;
  const Checked c = Check(dir, {}, {"data.seq_len=8"});
  CHECK(c.errors.empty());
  CHECK(c.report.lost == std::vector<std::string>{
                             "data position (epoch 0 after 64 windows): it counts windows of the checkpoint's data "
                             "(data.seq_len 16 -> 8), so training continues elsewhere in the data"});
  // The same file spelled another way keeps the position; another file does not.
  TempDir same;
  CHECK(Check(same, {}, {"data.train.path=./corpus.txt"}).report.lost.empty());
  TempDir other;
  CHECK(Check(other, {}, {"data.train.path=other.txt"}).report.lost ==
        std::vector<std::string>{"data position (epoch 0 after 64 windows): it counts windows of the checkpoint's "
                                 "data (data.train.path " + other.File("corpus.txt") + " -> " + other.File("other.txt") +
                                 "), so training continues elsewhere in the data"});
}

TEST_CASE("another model, an unsharded checkpoint under shards, another unsharded optimizer are errors",
          "[launcher][resume]") {
  {
    TempDir dir;
    const Checked c = Check(dir, {"model.vocab_size=300"}, {});
    CHECK(c.errors == std::vector<std::string>{"model.vocab_size: the checkpoint " + dir.File("ckpt/step_00000004") +
                                               " was trained with model.vocab_size 300; this plan has 256, so its "
                                               "tensors cannot load"});
    CHECK(c.text == "resume from " + dir.File("ckpt/step_00000004") + " (step 4; job 'tiny', run aaaaaaaa, plan " +
                        PlanHashHex(PlanOf(dir, {"model.vocab_size=300"})) +
                        "): does not load under this layout (see the errors above)\n");
  }
  {
    TempDir dir;
    const Checked c = Check(dir, {}, {"sharding.stage=2"});
    CHECK(c.errors == std::vector<std::string>{
                          "sharding.stage: the checkpoint " + dir.File("ckpt/step_00000004") +
                          " is unsharded (model.safetensors, optimizer.pt): it resumes only at sharding.stage 0 with "
                          "fp32 parameters and no tensor, pipeline or expert parallelism; `accel export` turns its "
                          "weights into a model.init_from"});
  }
  {
    TempDir dir;
    const Checked c = Check(dir, {"model.vocab_size=300", "sharding.stage=1", "data.global_batch_size=8"},
                            {"model.vocab_size=300", "sharding.stage=1", "data.global_batch_size=8", "parallel.tensor=2"});
    CHECK(c.errors == std::vector<std::string>{"parallel.tensor: the checkpoint " + dir.File("ckpt/step_00000004") +
                                               " pads the vocabulary to 384 rows (parallel.tensor 1); this plan pads "
                                               "it to 512, so the embedding cannot load"});
  }
  {
    TempDir dir;
    const Checked c = Check(dir, {}, {"training.optimizer.name=sgd"});
    CHECK(c.errors == std::vector<std::string>{"training.optimizer.name: the checkpoint " +
                                               dir.File("ckpt/step_00000004") +
                                               " is unsharded and holds adamw state (optimizer.pt), which "
                                               "training.optimizer.name sgd cannot load"});
  }
}

// Issue #42: a resumed run with global_batch_size: auto silently trained with another global
// batch than the checkpoint's.
TEST_CASE("a global batch auto that resolves otherwise is an error, an explicit one a warning", "[launcher][resume]") {
  TempDir dir;
  const Checked automatic = Check(dir, {}, {"cluster.devices_per_node=2"});
  CHECK(automatic.errors == std::vector<std::string>{
                                "data.global_batch_size: data.global_batch_size auto resolves to 4 under this layout, "
                                "but the checkpoint " + dir.File("ckpt/step_00000004") +
                                " was trained with 8: set data.global_batch_size: 8 to continue with the same batch, "
                                "or 4 to change it"});
  TempDir other;
  const Checked explicit_batch = Check(other, {}, {"cluster.devices_per_node=2", "data.global_batch_size=4"});
  CHECK(explicit_batch.report.errors.empty());
  CHECK(explicit_batch.errors == std::vector<std::string>{"warning data.global_batch_size: data.global_batch_size 4 "
                                                          "differs from the checkpoint's 8: the rest of the run "
                                                          "trains with another batch"});
  CHECK(explicit_batch.report.warnings[0].code == "W0601");
}

TEST_CASE("a checkpoint directory resolves to its newest valid checkpoint, a corrupt one is refused",
          "[launcher][resume]") {
  TempDir dir;
  const ir::Plan plan = PlanOf(dir, {});
  WriteCheckpoint(dir.File("ckpt"), plan, 2);
  const std::string newest = WriteCheckpoint(dir.File("ckpt"), plan, 4);
  CHECK(CheckResume(plan, dir.File("ckpt")).value().checkpoint_dir == newest);
  { std::ofstream(newest + "/trainer_state.json", std::ios::app) << "x"; }
  CHECK(CheckResume(plan, newest).status().message() ==
        newest + ": trainer_state.json has 50 bytes, manifest says 49 (truncated?)");
  CHECK(CheckResume(plan, dir.File("nothing")).status().message() ==
        "no valid checkpoint under " + dir.File("nothing"));
}

TEST_CASE("a checkpoint without a recorded layout is not judged", "[launcher][resume]") {
  TempDir dir;
  CheckpointStore legacy(dir.File("ckpt"), 2);
  REQUIRE(legacy.Write(3, {{"trainer_state.json", "{}"}}).ok());
  const ResumeReport report = CheckResume(PlanOf(dir, {}), dir.File("ckpt")).value();
  CHECK(report.errors.empty());
  CHECK(ResumeReportText(report) ==
        "resume from " + dir.File("ckpt/step_00000003") + " (step 3): loads under this layout\n"
        "  resharded: nothing (same layout)\n"
        "  carried over: nothing\n"
        "  lost: nothing known: the checkpoint records no layout (written before accel recorded one); the workers "
        "check it when they load it\n");
}

TEST_CASE("accel plan --resume-from locates a mismatch at the spec field", "[launcher][resume][cli]") {
  TempDir dir;
  { std::ofstream(dir.File("job.yaml")) << kJob; }
  WriteCheckpoint(dir.File("ckpt"), PlanOf(dir, {"model.num_layers=4"}), 4);
  cli::PlanCommandOptions options;
  options.spec = dir.File("job.yaml");
  options.resume_from = dir.File("ckpt");
  std::ostringstream out, err;
  CHECK(cli::RunPlanCommand(options, out, err) == 1);
  CHECK(err.str() == dir.File("job.yaml") + ":6:15: error[E0604]: the checkpoint " + dir.File("ckpt/step_00000004") +
                         " was trained with model.num_layers 4; this plan has 2, so its tensors cannot load\n"
                         "   num_layers: 2\n"
                         "               ^\n");
  options.overrides = {"model.num_layers=4"};
  std::ostringstream out2, err2;
  CHECK(cli::RunPlanCommand(options, out2, err2) == 0);
  CHECK(err2.str() == "");
  CHECK_THAT(out2.str(), Catch::Contains("): loads under this layout\n"));
  options.search = true;
  std::ostringstream out3, err3;
  CHECK(cli::RunPlanCommand(options, out3, err3) == 2);
  CHECK(err3.str() == "error: --resume-from checks the spec's own layout: --search cannot be used with it\n");
}

}  // namespace
}  // namespace accel::exec
