// Checkpoints carry the identity of the run that wrote them, and the store never deletes or
// replaces another run's (issue #42, "nothing lost, ever"): retention prunes only the current
// run's complete checkpoints, a step of another run is never replaced, resume considers only the
// job's own checkpoints.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/run_identity.h"
#include "tests/common/temp_root.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using testing::TempRoot;

const std::string kOldRun = std::string(32, 'a');
const std::string kNewRun = std::string(32, 'b');

CheckpointIdentity Identity(const std::string& job, const std::string& run_id) {
  return {job, "0x12345678", run_id, nlohmann::json{{"model.hidden_size", 32}}};
}

std::vector<CheckpointFile> StepFiles(int64_t step) {
  return {{"model.safetensors", std::string(100, static_cast<char>('a' + step % 26))},
          {"trainer_state.json", "{\"step\": " + std::to_string(step) + "}"}};
}

std::vector<int64_t> PublishedSteps(const CheckpointStore& store) {
  std::vector<int64_t> steps;
  const std::vector<CheckpointInfo> listed = store.List().value();
  for (const CheckpointInfo& c : listed) steps.push_back(c.step);
  return steps;
}

void Corrupt(const fs::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(3);
  f.put('Z');
}

TEST_CASE("a manifest records the job, the plan hash, the run id and the layout", "[checkpoint][identity]") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2, Identity("tiny", kOldRun));
  absl::StatusOr<std::string> dir = store.Write(3, StepFiles(3));
  REQUIRE(dir.ok());
  absl::StatusOr<CheckpointIdentity> read = CheckpointStore::ReadIdentity(*dir);
  REQUIRE(read.ok());
  CHECK(read->job == "tiny");
  CHECK(read->plan_hash == "0x12345678");
  CHECK(read->run_id == kOldRun);
  CHECK(read->layout == nlohmann::json{{"model.hidden_size", 32}});
  CHECK(RunLabel(kOldRun) == "run aaaaaaaa");
  CHECK(RunLabel("") == "an unrecorded run");
}

TEST_CASE("a store with a job and no run id draws one, or continues the resumed run's", "[checkpoint][identity]") {
  TempRoot root;
  CheckpointStore fresh(root.path.string(), 2, Identity("tiny", ""));
  REQUIRE(fresh.Write(1, StepFiles(1)).ok());
  const std::string drawn = fresh.identity().run_id;
  CHECK(drawn.size() == 32);
  CHECK(drawn.find_first_not_of("0123456789abcdef") == std::string::npos);

  CheckpointStore resumed(root.path.string(), 2, Identity("tiny", ""));
  resumed.ContinueRun(CheckpointStore::ReadIdentity((root.path / "step_00000001").string()).value());
  CHECK(resumed.identity().run_id == drawn);
  // A run id given by `accel run` is kept.
  CheckpointStore given(root.path.string(), 2, Identity("tiny", kNewRun));
  given.ContinueRun(Identity("tiny", kOldRun));
  CHECK(given.identity().run_id == kNewRun);
}

// Issue #42: retraining from scratch into a directory holding an older run's steps 30 and 40
// deleted the new run's steps 10 and 12 as soon as they were written (keep-K by step number).
TEST_CASE("retention prunes only the current run's checkpoints", "[checkpoint][identity][fault]") {
  TempRoot root;
  CheckpointStore old_run(root.path.string(), 2, Identity("tiny", kOldRun));
  for (int64_t step : {30, 40}) REQUIRE(old_run.Write(step, StepFiles(step)).ok());
  CheckpointStore new_run(root.path.string(), 2, Identity("tiny", kNewRun));
  REQUIRE(new_run.Write(10, StepFiles(10)).ok());
  REQUIRE(new_run.Write(12, StepFiles(12)).ok());
  CHECK(PublishedSteps(new_run) == std::vector<int64_t>{10, 12, 30, 40});
  REQUIRE(new_run.Write(14, StepFiles(14)).ok());
  CHECK(PublishedSteps(new_run) == std::vector<int64_t>{12, 14, 30, 40});
}

// Issue #42: the run summary said "checkpoints in DIR" after retention had deleted them all.
TEST_CASE("the newest checkpoint of a run is found among other runs'", "[checkpoint][identity]") {
  TempRoot root;
  CheckpointStore old_run(root.path.string(), 2, Identity("tiny", kOldRun));
  REQUIRE(old_run.Write(40, StepFiles(40)).ok());
  CheckpointStore new_run(root.path.string(), 2, Identity("tiny", kNewRun));
  CHECK_FALSE(new_run.NewestOfRun().has_value());
  REQUIRE(new_run.Write(10, StepFiles(10)).ok());
  REQUIRE(new_run.Write(12, StepFiles(12)).ok());
  CHECK(new_run.NewestOfRun()->path == (root.path / "step_00000012").string());
  fs::resize_file(root.path / "step_00000012" / "model.safetensors", 10);
  CHECK(new_run.NewestOfRun()->step == 10);
  CHECK_FALSE(CheckpointStore(root.path.string(), 2).NewestOfRun().has_value());
}

TEST_CASE("checkpoints that fail their CRC are not pruned, nor is the new run's newest", "[checkpoint][identity][fault]") {
  TempRoot root;
  CheckpointStore old_run(root.path.string(), 2, Identity("tiny", kOldRun));
  for (int64_t step : {30, 40}) REQUIRE(old_run.Write(step, StepFiles(step)).ok());
  for (const char* step : {"step_00000030", "step_00000040"}) Corrupt(root.path / step / "model.safetensors");
  CheckpointStore new_run(root.path.string(), 1, Identity("tiny", kNewRun));
  REQUIRE(new_run.Write(10, StepFiles(10)).ok());
  REQUIRE(new_run.Write(12, StepFiles(12)).ok());
  CHECK(PublishedSteps(new_run) == std::vector<int64_t>{12, 30, 40});
  CHECK(new_run.LatestGood().value().step == 12);
}

// Issue #42: two jobs with one checkpoint.dir silently replaced each other's steps.
TEST_CASE("a step of another run is never replaced", "[checkpoint][identity][fault]") {
  TempRoot root;
  CheckpointStore first(root.path.string(), 2, Identity("a", kOldRun));
  REQUIRE(first.Write(30, StepFiles(30)).ok());
  const std::string step30 = (root.path / "step_00000030").string();
  CheckpointStore second(root.path.string(), 2, Identity("b", kNewRun));
  absl::StatusOr<std::string> clash = second.Write(30, {{"model.safetensors", "other weights"}});
  CHECK(clash.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(clash.status().message() ==
        "checkpoint of step 30 not written (the previous checkpoints are intact): " + step30 +
            " holds a checkpoint of another run (job 'a', run aaaaaaaa); accel never replaces it");
  CHECK(CheckpointStore::ReadFile(step30, "model.safetensors").value() == StepFiles(30)[0].bytes);
  CHECK_FALSE(fs::exists(root.path / ".tmp-step_00000030"));

  // The multi-writer path refuses the same way.
  REQUIRE(second.BeginStep(30).ok());
  REQUIRE(CheckpointStore::WriteRankFiles((root.path / ".tmp-step_00000030").string(), 0, StepFiles(30)).ok());
  CHECK(second.Publish(30, 1, {}).status().message() ==
        "checkpoint of step 30 not written (the previous checkpoints are intact): " + step30 +
            " holds a checkpoint of another run (job 'a', run aaaaaaaa); accel never replaces it");
  // Nor is a directory whose manifest cannot be read.
  fs::create_directories(root.path / "step_00000050");
  CHECK(second.Write(50, StepFiles(50)).status().message() ==
        "checkpoint of step 50 not written (the previous checkpoints are intact): " +
            (root.path / "step_00000050").string() +
            " already exists and is not a readable checkpoint; accel never replaces it");
  // A run rewriting its own step (a restart) replaces it.
  REQUIRE(first.Write(30, {{"model.safetensors", "again"}}).ok());
  CHECK(CheckpointStore::ReadFile(step30, "model.safetensors").value() == "again");
}

TEST_CASE("resume considers only the job's own checkpoints", "[checkpoint][identity]") {
  TempRoot root;
  CheckpointStore a(root.path.string(), 2, Identity("a", kOldRun));
  REQUIRE(a.Write(40, StepFiles(40)).ok());
  CheckpointStore b(root.path.string(), 2, Identity("b", kNewRun));
  REQUIRE(b.Write(20, StepFiles(20)).ok());
  CHECK(b.LatestGood().value().step == 20);
  CHECK(a.LatestGood().value().step == 40);
  CheckpointStore anyone(root.path.string(), 2);
  CHECK(anyone.LatestGood().value().step == 40);
}

TEST_CASE("a failed first checkpoint does not claim earlier ones are intact", "[checkpoint][identity]") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2, Identity("tiny", kNewRun));
  absl::StatusOr<std::string> tmp = store.BeginStep(1);
  REQUIRE(tmp.ok());
  const std::string planted = (fs::path(*tmp) / "model.safetensors").string();
  fs::create_symlink("/dev/null", planted);
  absl::Status s = CheckpointStore::WriteRankFiles(*tmp, 0, StepFiles(1));
  CHECK(s.message() == "checkpoint of step 1 not written (no earlier checkpoint exists): refusing to write " +
                           planted +
                           ": it is a symbolic link (accel does not follow links when writing into run "
                           "and checkpoint directories)");
}

}  // namespace
}  // namespace accel::exec
