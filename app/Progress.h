// Progress: what a long run shows on stderr. On a terminal: a bar inside the epoch with throughput and ETA,
// redrawn at most ten times a second and replaced by the epoch's summary line when it ends. Not a terminal
// (a log file, CI): only the summary line per epoch. Quiet: nothing (the program still prints its result on
// stdout).
//
//   app::Progress progress(quiet, "molecules");
//   progress.startEpoch(epoch, epochs, steps);
//   for (...) progress.step(batchGraphs);
//   progress.endEpoch("epoch 3/10  loss 0.41  valid mae 0.38");
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace gnn::app {

class Progress {
 public:
  /// `unit`: what samples are called in the bar ("molecules", "nodes").
  Progress(bool quiet, std::string unit);
  /// Whether stderr is a terminal (the bar is drawn).
  bool interactive() const { return bar_; }
  bool quiet() const { return quiet_; }

  /// 1-based epoch of `epochs`; `steps`: steps this epoch will run (0: unknown, no ETA).
  void startEpoch(int64_t epoch, int64_t epochs, int64_t steps);
  void step(int64_t samples);
  /// Clears the bar and prints `line` (unless quiet).
  void endEpoch(const std::string& line);
  /// Clears the bar, printing nothing.
  void clear();
  /// A line between epochs (e.g. "resumed from ..."), unless quiet.
  void line(const std::string& text);
  /// Samples per second over the epoch so far.
  double rate() const;

 private:
  void draw(bool force);
  bool quiet_, bar_;
  std::string unit_;
  int64_t epoch_ = 0, epochs_ = 0, steps_ = 0, done_ = 0, samples_ = 0;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  size_t drawnWidth_ = 0;
};

/// "1:02:03" / "4:05" for a duration in seconds.
std::string formatDuration(double seconds);

}  // namespace gnn::app
