#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace accel::cli {

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::ostream& out, std::string label, bool enabled)
    : out_(out), label_(std::move(label)), enabled_(enabled) {}

void ProgressBar::Update(size_t done, size_t total) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  int filled = static_cast<int>(fraction * kWidth);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = seconds > 0 ? static_cast<double>(done) / 1e6 / seconds : 0.0;
  char line[160];
  std::snprintf(line, sizeof(line), "\r%s [%s%s] %3d%% %7.1f MB/s", label_.c_str(),
                std::string(filled, '#').c_str(), std::string(kWidth - filled, '-').c_str(),
                static_cast<int>(fraction * 100), rate);
  out_ << line << std::flush;
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (drawn_) out_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace accel::cli
