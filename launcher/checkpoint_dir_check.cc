#include "launcher/checkpoint_dir_check.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/diag_codes.h"

namespace accel::exec {
namespace {

// "2 checkpoints of another run (steps 30, 40; job 'x', run 1a2b3c4d)": who wrote them, named
// once when one run did.
std::string DescribeOthers(const std::vector<FoundCheckpoint>& found) {
  std::vector<int64_t> steps;
  std::set<std::pair<std::string, std::string>> writers;
  for (const FoundCheckpoint& f : found) {
    steps.push_back(f.info.step);
    writers.insert({f.identity.job, f.identity.run_id});
  }
  std::string who;
  if (writers.size() > 1) {
    who = absl::StrCat(writers.size(), " runs");
  } else if (writers.begin()->first.empty()) {
    who = "written before accel recorded runs, or unreadable";
  } else {
    who = absl::StrCat("job '", writers.begin()->first, "', ", RunLabel(writers.begin()->second));
  }
  return absl::StrCat(found.size(), found.size() == 1 ? " checkpoint" : " checkpoints", " of another run (",
                      found.size() == 1 ? "step " : "steps ", absl::StrJoin(steps, ", "), "; ", who, ")");
}

PlanIssue Occupied(std::string message) {
  PlanIssue issue;
  issue.code = codes::kCheckpointDirOccupied;
  issue.field = "checkpoint.dir";
  issue.message = std::move(message);
  return issue;
}

}  // namespace

absl::StatusOr<CheckpointDirScan> ScanCheckpointDir(const ir::Plan& plan, const std::string& dir) {
  CheckpointDirScan scan;
  scan.dir = dir;
  CheckpointIdentity job_only;
  job_only.job = plan.job().name();
  const CheckpointStore store(dir, 1, job_only);
  absl::StatusOr<std::vector<CheckpointInfo>> all = store.List();
  if (!all.ok()) return all.status();
  if (plan.checkpoint().resume() == ir::RESUME_POLICY_AUTO && !all->empty()) {
    absl::StatusOr<CheckpointInfo> latest = store.LatestGood();
    if (latest.ok()) {
      CheckpointIdentity identity = CheckpointStore::ReadIdentity(latest->path).value_or(CheckpointIdentity{});
      scan.resume = FoundCheckpoint{*latest, std::move(identity)};
      scan.run_id = scan.resume->identity.run_id;
    } else if (!absl::IsNotFound(latest.status())) {
      return latest.status();
    }
  }
  for (const CheckpointInfo& info : *all) {
    CheckpointIdentity identity = CheckpointStore::ReadIdentity(info.path).value_or(CheckpointIdentity{});
    // The resumed lineage is this run's; a resumed checkpoint without a run id is not (the run
    // draws a new id), but it is the one resumed, not another run's.
    const bool lineage = !scan.run_id.empty() && identity.run_id == scan.run_id;
    const bool resumed = scan.resume.has_value() && info.path == scan.resume->info.path;
    if (!lineage && !resumed) scan.others.push_back({info, std::move(identity)});
  }
  return scan;
}

std::vector<PlanIssue> CheckpointDirIssues(const ir::Plan& plan, const CheckpointDirScan& scan) {
  if (scan.others.empty()) return {};
  const std::string head = absl::StrCat("checkpoint.dir ", scan.dir, " holds ");
  if (!scan.resume.has_value()) {
    const bool never = plan.checkpoint().resume() == ir::RESUME_POLICY_NEVER;
    return {Occupied(absl::StrCat(
        head, DescribeOthers(scan.others),
        never ? " and checkpoint.resume is never" : absl::StrCat(" and none that job '", plan.job().name(),
                                                                 "' can resume"),
        ": a new run would write its checkpoints beside them, and a later resume or `accel export` could take "
        "either run's; move them away or choose another checkpoint.dir",
        never ? ", or set checkpoint.resume: auto to continue them" : ""))};
  }
  std::vector<FoundCheckpoint> newer;
  for (const FoundCheckpoint& f : scan.others) {
    if (f.info.step > scan.resume->info.step) newer.push_back(f);
  }
  if (newer.empty()) return {};
  return {Occupied(absl::StrCat(head, DescribeOthers(newer), ", newer than step ", scan.resume->info.step,
                                ", the one this run resumes: this run would write the same step numbers; move "
                                "them away or choose another checkpoint.dir"))};
}

std::string LeftInPlaceLine(const CheckpointDirScan& scan) {
  if (scan.others.empty()) return "";
  return absl::StrCat("checkpoint.dir ", scan.dir, " holds ", DescribeOthers(scan.others), ", left in place");
}

}  // namespace accel::exec
