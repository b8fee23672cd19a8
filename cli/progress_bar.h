// A one-line progress bar on a terminal: "tokenize [########------------]  40%  12.3 MB/s".
#ifndef ACCEL_CLI_PROGRESS_BAR_H_
#define ACCEL_CLI_PROGRESS_BAR_H_

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace accel::cli {

// True when standard error is a terminal (the only place a bar is drawn).
bool StderrIsTerminal();

class ProgressBar {
 public:
  // Draws on `out` (redrawing the line with '\r') only when `enabled`; `label` starts the line.
  ProgressBar(std::ostream& out, std::string label, bool enabled);

  // Shows `done` of `total` bytes and the rate since construction.
  void Update(size_t done, size_t total);

  // Ends the line (when anything was drawn).
  void Finish();

 private:
  std::ostream& out_;
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace accel::cli

#endif  // ACCEL_CLI_PROGRESS_BAR_H_
