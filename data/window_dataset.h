// Training windows over a token stream: deterministic per-epoch shuffling, disjoint data-parallel
// shards, and a resumable position.
#ifndef ACCEL_DATA_WINDOW_DATASET_H_
#define ACCEL_DATA_WINDOW_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// Where a rank is in its shard: the epoch and the number of windows of that epoch already read.
// Saved in checkpoints; (0, 0) is the start.
struct DataPosition {
  int64_t epoch = 0;
  int64_t index = 0;
  bool operator==(const DataPosition&) const = default;
};

// A position every data-parallel layout agrees on: the epoch and how many windows of its permuted
// order all ranks together have read. Rank r reads permuted positions r, r + dp_size, ..., so
// after k windows per rank the ranks have read exactly the first k·dp_size; checkpoints save this
// form, and a run resumed with another data-parallel degree continues with the next unread window.
struct GlobalDataPosition {
  int64_t epoch = 0;
  int64_t samples = 0;
  bool operator==(const GlobalDataPosition&) const = default;
};

// How the dataset cuts and distributes windows.
struct WindowDatasetOptions {
  // Tokens per training sequence; each window holds seq_len + 1 tokens (inputs and shifted targets).
  int64_t seq_len = 128;
  // Seed of the per-epoch permutation; the same on every rank.
  uint64_t seed = 0;
  // Whether windows are permuted each epoch (false: file order, for tests and evaluation).
  bool shuffle = true;
  // This rank's index among the data-parallel ranks, and their number.
  int dp_rank = 0;
  int dp_size = 1;
};

// Window w covers tokens [w*seq_len, w*seq_len + seq_len + 1): consecutive windows share one token,
// so every token except the first is a target exactly once per epoch. NumWindows() =
// (tokens - 1) / seq_len. Each epoch e draws a permutation of all windows (Fisher-Yates driven by
// SplitMix64 seeded from (seed, e), identical on every platform); rank r reads permuted positions
// r, r + dp_size, r + 2*dp_size, ... so the ranks' shards are disjoint and the first k windows of
// every rank together are the first k*dp_size permuted windows (the single-rank order). The tail of
// NumWindows() % dp_size windows is skipped each epoch so all ranks read equally many.
class WindowDataset {
 public:
  // tokens: the whole corpus; source names it in errors. Errors: InvalidArgument when
  // seq_len < 1, dp_rank/dp_size are inconsistent, or there are fewer than dp_size windows
  // ("SOURCE has N tokens; needs at least ... for seq_len S and D data-parallel ranks").
  static absl::StatusOr<std::unique_ptr<WindowDataset>> Create(std::vector<uint32_t> tokens,
                                                               const WindowDatasetOptions& options,
                                                               const std::string& source);

  // Windows in the whole corpus.
  int64_t NumWindows() const { return num_windows_; }
  // Windows this rank reads per epoch.
  int64_t WindowsPerRank() const { return num_windows_ / options_.dp_size; }
  // The options the dataset was created with.
  const WindowDatasetOptions& options() const { return options_; }

  // Appends count windows (count * (seq_len + 1) token ids, row-major) to out and advances the
  // position, moving to the next epoch (a new permutation) when the shard is exhausted.
  void NextBatch(int64_t count, std::vector<int64_t>& out);

  // The position the next NextBatch reads from.
  DataPosition Position() const { return position_; }

  // Moves to position (from a checkpoint). Errors: InvalidArgument when index is not in
  // [0, WindowsPerRank()] or epoch < 0.
  absl::Status Seek(const DataPosition& position);

  // This rank's position in the global form: {epoch, index · dp_size}.
  GlobalDataPosition GlobalPosition() const;

  // Moves to a global position, e.g. one saved by a run with another data-parallel degree. A
  // position at or past the end of this layout's epoch (its tail of NumWindows() % dp_size
  // windows differs) starts the next epoch. Errors: InvalidArgument for epoch < 0 or samples < 0,
  // and when samples is not a multiple of dp_size ("data position: S windows read in epoch E do
  // not split evenly over D data-parallel ranks").
  absl::Status SeekGlobal(const GlobalDataPosition& position);

 private:
  WindowDataset(std::vector<uint32_t> tokens, const WindowDatasetOptions& options);
  void BuildEpochOrder();

  std::vector<uint32_t> tokens_;
  WindowDatasetOptions options_;
  int64_t num_windows_;
  DataPosition position_;
  // Window ids of the current epoch, in global permuted order.
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

}  // namespace accel::exec

#endif  // ACCEL_DATA_WINDOW_DATASET_H_
