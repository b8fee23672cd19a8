// Crash-safe checkpoint directories: atomic publication, per-file CRC-32C manifest, keep-last-K,
// and selection of the newest checkpoint that verifies. Torch-free: files are byte strings.
//
// Layout: ROOT/step_NNNNNNNN/{<files>..., manifest.json}. manifest.json is
//   {"format": "accel-checkpoint", "version": 1, "step": N,
//    "files": [{"name": "model.safetensors", "size_bytes": 123, "crc32c": "e3069283"}, ...],
//    "run": {"job": "x", "plan_hash": "0x1a2b3c4d", "run_id": "<32 hex>"},   (run_identity.h)
//    "layout": {"model.hidden_size": 768, ...}}                             (resume_layout.h)
// "run" and "layout" are written when the store has an identity; older manifests lack them.
//
// Nothing lost: a store deletes only checkpoints of its own run id (pruning), never replaces a
// checkpoint of another run (or an unreadable one) at the step it publishes, and LatestGood skips
// checkpoints of other jobs.
// A checkpoint is written into ROOT/.tmp-step_NNNNNNNN, every file and the directory are fsynced,
// the directory is renamed to its final name and ROOT is fsynced, so a crash leaves either the
// complete checkpoint or none (POSIX rename atomicity).
//
// Several writers (one per rank) publish one checkpoint in three phases:
//   1. every rank: tmp = BeginStep(step); WriteRankFiles(tmp, rank, its files) — each file and a
//      list rank-RRRRR.files.json (name, size, CRC-32C) are written and fsynced;
//   2. the caller runs a barrier (every rank has returned from WriteRankFiles);
//   3. rank 0: Publish(step, world_size, extra files) merges the lists into manifest.json, removes
//      them, fsyncs and renames the directory exactly as Write does, then prunes to keep-K.
// ROOT must be one directory that every rank sees (a shared file system across nodes). A crash in
// any phase leaves only ROOT/.tmp-step_N behind, which List/LatestGood never look at, so the
// previous checkpoints stay readable. Rank 0 calls RemoveStaleTemporaries once at start-up (before
// its first collective) so that leftovers of a crashed attempt at the same step cannot be mixed
// into a new checkpoint.
#ifndef ACCEL_CHECKPOINT_CHECKPOINT_STORE_H_
#define ACCEL_CHECKPOINT_CHECKPOINT_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/run_identity.h"

namespace accel::exec {

// One file of a checkpoint: a plain file name (no '/' or NUL, not "manifest.json", not starting with
// '.') and its contents. Readers refuse a manifest or rank list naming anything else.
struct CheckpointFile {
  std::string name;
  std::string bytes;
};

// A published checkpoint directory.
struct CheckpointInfo {
  int64_t step = 0;
  std::string path;
};

// Manages the checkpoints under one root directory. Write is for a single writer (global rank 0);
// BeginStep/WriteRankFiles/Publish let every rank write its own files (see the top of this file).
class CheckpointStore {
 public:
  // root is created on first Write; keep >= 1 is how many of this run's newest checkpoints survive
  // pruning. identity (run_identity.h) is recorded in every manifest; with a job but no run id the
  // store draws one (NewRunId) at its first publication, unless ContinueRun gives it one first.
  // Without an identity (job and run id ""), the store's own checkpoints are those without one.
  CheckpointStore(std::string root, int keep, CheckpointIdentity identity = {});

  // This store's identity (its run id once drawn or adopted).
  const CheckpointIdentity& identity() const { return identity_; }

  // Resuming `resumed` (a checkpoint's ReadIdentity) continues its run: a store without a run id
  // takes the checkpoint's, so the lineage keeps one id and pruning covers its older checkpoints.
  // A store that has a run id keeps it (`accel run` already passes the resumed run's id).
  void ContinueRun(const CheckpointIdentity& resumed);

  // The identity dir's manifest records (fields empty for a checkpoint written before identities).
  // Errors: DataLoss as ManifestFiles for a missing or malformed manifest.
  static absl::StatusOr<CheckpointIdentity> ReadIdentity(const std::string& dir);

  // Publishes files as the checkpoint of step (replacing an existing one of the same step only when
  // it is this run's), then deletes this run's complete checkpoints but the newest `keep`, and
  // stale temporary directories. Returns the final directory. Errors: InvalidArgument for a bad
  // file name or step < 0; on any I/O failure (a full disk: ENOSPC, EFBIG, EDQUOT) the temporary
  // directory is removed, the previous checkpoints are untouched and the error is "checkpoint of
  // step N not written (the previous checkpoints are intact): " ("(no earlier checkpoint exists)"
  // when ROOT holds none) followed by WriteAndSync's message naming the path and errno text
  // (Internal; FailedPrecondition for a symbolic link at a file's path), or, when ROOT/step_N
  // exists and is not this run's, FailedPrecondition "...: ROOT/step_N holds a checkpoint of
  // another run (job 'J', run 1a2b3c4d); accel never replaces it" ("ROOT/step_N already exists and
  // is not a readable checkpoint; accel never replaces it").
  absl::StatusOr<std::string> Write(int64_t step, const std::vector<CheckpointFile>& files);

  // Multi-writer phase 1, every rank: creates (if needed) and returns ROOT/.tmp-step_NNNNNNNN, the
  // directory the ranks write step's files into. Idempotent and safe when several ranks call it at
  // once; it never deletes anything. Errors: InvalidArgument for step < 0; FailedPrecondition
  // SymlinkRefusal (common/no_follow.h) when the temporary name is a symbolic link (it would send
  // the files outside ROOT); Internal naming the path when the directory cannot be created.
  absl::StatusOr<std::string> BeginStep(int64_t step);

  // Multi-writer phase 1, every rank: writes and fsyncs files into tmp_dir (from BeginStep), then
  // the list RankListName(rank) recording each file's name, size and CRC-32C (written under a
  // temporary name and renamed, so a list that exists is complete). File names follow Write's rules
  // and must differ between ranks (e.g. ShardFileName in sharded_tensors.h). Errors:
  // InvalidArgument for rank < 0 or a bad or duplicate file name (including names of the form
  // rank-*.files.json); FailedPrecondition when tmp_dir does not exist; on I/O failure Write's
  // "checkpoint of step N not written (the previous checkpoints are intact): ..." error.
  static absl::Status WriteRankFiles(const std::string& tmp_dir, int rank, const std::vector<CheckpointFile>& files);

  // Multi-writer phase 3, rank 0 only, after a barrier that follows every rank's WriteRankFiles:
  // writes extra_files_from_rank0 (e.g. config.json, trainer state) into the temporary directory,
  // merges the lists of ranks 0..world_size-1 and those files into manifest.json (rank 0's files
  // first, then rank 1's, ..., then the extra files), deletes the lists and any file no list names,
  // fsyncs, renames the directory to ROOT/step_NNNNNNNN (replacing one of the same step: Write's
  // rule, this run's only) and prunes
  // like Write, except that only temporaries of steps <= step are deleted (a later step may be in
  // progress). Listed files are checked for presence and size, not re-read (readers check CRCs).
  // Returns the final directory. Errors: InvalidArgument for step < 0, world_size < 1 or a bad
  // extra file name (Write's rules, a rank-*.files.json name, or a name a rank wrote);
  // FailedPrecondition "TMP: rank R of W has not written its file list
  // (rank-RRRRR.files.json)" when a list is missing, "TMP: NAME is written by rank A and rank B",
  // "TMP: rank-RRRRR.files.json is from rank R, but the world size is W (left over from an earlier
  // run?)", or "no checkpoint of step N is in progress (TMP is missing)"; DataLoss "TMP:
  // rank-RRRRR.files.json is malformed", "TMP: rank-RRRRR.files.json names 'NAME', which is not a
  // checkpoint file name", "TMP: rank R's NAME is missing" / "... has X bytes, its list says Y";
  // on I/O failure Write's "checkpoint of step N not written (...): ..." error. On any error
  // nothing is published.
  absl::StatusOr<std::string> Publish(int64_t step, int world_size,
                                      const std::vector<CheckpointFile>& extra_files_from_rank0);

  // Deletes every temporary directory (ROOT/.tmp-*) left by crashed writes. Call it from rank 0
  // only when no rank can be writing, e.g. at start-up before the first collective. A missing root
  // is fine. Errors: Internal naming the path.
  absl::Status RemoveStaleTemporaries() const;

  // Published checkpoint directories (name step_N), ascending by step, without verifying them.
  // A missing root yields an empty list.
  absl::StatusOr<std::vector<CheckpointInfo>> List() const;

  // Checks dir against its manifest: manifest present and well-formed, every listed file present
  // with the recorded size and CRC-32C. Errors: DataLoss "DIR: REASON" (missing, truncated or
  // corrupt file).
  static absl::Status Verify(const std::string& dir);

  // The newest checkpoint of this store's job that passes Verify (checkpoints recording another
  // job name are passed over; all are considered by a store without a job). Each newer one that
  // failed is appended to skipped (if given) as its Verify message, so callers can log the
  // fallback. Errors: NotFound "no valid checkpoint under ROOT" when none verifies (or none exists).
  absl::StatusOr<CheckpointInfo> LatestGood(std::vector<std::string>* skipped = nullptr) const;

  // The newest checkpoint of this store's run id whose listed files are all present with their
  // recorded sizes (no CRC, so cheap: what a run's summary names), or nullopt when the run has
  // none, e.g. with checkpoint.at_end false, or under a store without a run id yet.
  std::optional<CheckpointInfo> NewestOfRun() const;

  // Contents of file name in checkpoint dir, checked against the manifest's size and CRC-32C.
  // Errors: NotFound when the manifest does not list it; DataLoss when it does not match.
  static absl::StatusOr<std::string> ReadFile(const std::string& dir, const std::string& name);

  // Names of the files dir's manifest lists, in manifest order (files are not checked).
  // Errors: DataLoss "DIR: manifest.json is missing" / "... is not a valid accel checkpoint
  // manifest" / "... has a malformed file entry" / "DIR: manifest.json names 'NAME', which is not a
  // checkpoint file name" (see CheckpointFile; Verify and ReadFile report the same).
  static absl::StatusOr<std::vector<std::string>> ManifestFiles(const std::string& dir);

  // Name of rank's file list in a multi-writer temporary directory: "rank-RRRRR.files.json" (the
  // rank zero-padded to 5 digits).
  static std::string RankListName(int rank);

  // Directory name of step: "step_" followed by the step zero-padded to 8 digits.
  static std::string StepDirName(int64_t step);

 private:
  // Draws the run id of a store with a job and none yet. Errors: NewRunId's.
  absl::Status EnsureRunId();
  // Whether dir may be this store's job's checkpoint (its manifest names this job, none, or is
  // unreadable).
  bool IsOwnJob(const std::string& dir) const;

  std::string root_;
  int keep_;
  CheckpointIdentity identity_;
};

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_CHECKPOINT_STORE_H_
