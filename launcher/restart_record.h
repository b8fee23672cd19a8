// What `accel run` records about each restart of a job (--max-restarts, and the elastic restarts
// of --min-nodes): RUN_DIR/restarts.jsonl, one JSON object per line, written before the restarted
// workers start; at the end of a run that finished, the list goes into summary.json as
// "restarts", each with the time the restart cost. Torch-free.
#ifndef ACCEL_LAUNCHER_RESTART_RECORD_H_
#define ACCEL_LAUNCHER_RESTART_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace accel::exec {

// One restart. Times are Unix seconds (wall clock of the node that wrote it).
struct RestartRecord {
  int restart = 1;                 // 1 for the first restart of the run
  int nodes_before = 1;
  int nodes_after = 1;
  int world_before = 1;            // ranks
  int world_after = 1;
  std::vector<int> nodes_kept;     // launch node ranks that went on (all of them without a shrink)
  int64_t resumed_step = 0;        // step of the checkpoint the restart resumes; 0: from the start
  // The failed attempt's last step in this node's metrics.jsonl (rank 0 writes it) and when it
  // ended; nullopt where this node has no metrics.jsonl.
  std::optional<int64_t> last_step_before;
  std::optional<double> last_step_unix;
  double failed_unix = 0;          // when the launcher saw its workers fail
  double relaunch_unix = 0;        // when it started the restarted workers
};

// The record as one line of JSON (no newline); unknown values as null.
std::string RestartRecordJson(const RestartRecord& record);

// The last step record of RUN_DIR/metrics.jsonl: its step and unix_time; nullopt when the file
// is missing or holds no step.
struct LastStep {
  int64_t step = 0;
  double unix_time = 0;
};
std::optional<LastStep> LastMetricsStep(const std::string& run_dir);

// Rewrites RUN_DIR/restarts.jsonl with every record (atomically). Errors: those of
// WriteFileAtomically (common/durable_file.h).
absl::Status WriteRestartRecords(const std::string& run_dir, const std::vector<RestartRecord>& records);

// Adds "restarts" to RUN_DIR/summary.json (written by rank 0 at the end of the run): each record
// with "time_lost_seconds", the delay the restart added to the run: when the restarted run
// finished the failed attempt's last step (metrics.jsonl) minus when the failed attempt had
// finished it; it covers failure detection, the wait for nodes to rejoin, the start-up and the
// steps recomputed since the resumed checkpoint (null when the run dir lacks the times). Does
// nothing without records or without summary.json (this node did not run rank 0). Errors:
// Internal when summary.json is not a JSON object; those of WriteFileAtomically.
absl::Status AddRestartsToSummary(const std::string& run_dir, const std::vector<RestartRecord>& records);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RESTART_RECORD_H_
