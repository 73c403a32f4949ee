#include "app/Progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "app/TrainingFlags.h"

namespace gnn::app {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

Progress::Progress(bool quiet, std::string unit)
    : quiet_(quiet), bar_(!quiet && ::isatty(STDERR_FILENO) != 0), unit_(std::move(unit)) {}

void Progress::startEpoch(int64_t epoch, int64_t epochs, int64_t steps) {
  epoch_ = epoch;
  epochs_ = epochs;
  steps_ = steps;
  done_ = samples_ = 0;
  start_ = lastDraw_ = std::chrono::steady_clock::now();
  if (bar_) draw(true);
}

double Progress::rate() const {
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return sec > 0 ? static_cast<double>(samples_) / sec : 0.0;
}

void Progress::step(int64_t samples) {
  ++done_;
  samples_ += samples;
  if (bar_) draw(false);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  lastDraw_ = now;
  const double sec = std::chrono::duration<double>(now - start_).count();
  // A run bounded by --time-budget alone has no epoch count to show.
  std::string text = "epoch " + std::to_string(epoch_) +
                     (epochs_ == TrainingFlags::kEpochsUntilBudget ? std::string() : "/" + std::to_string(epochs_)) + " ";
  if (steps_ > 0) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * std::min<int64_t>(done_, steps_) / steps_);
    text += "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(kWidth - filled), '.') + "] ";
    text += std::to_string(done_) + "/" + std::to_string(steps_) + " steps";
  } else {
    text += std::to_string(done_) + " steps";
  }
  char buf[96];
  if (done_ > 0 && sec > 0) {
    std::snprintf(buf, sizeof buf, "  %.0f %s/s", static_cast<double>(samples_) / sec, unit_.c_str());
    text += buf;
    if (steps_ > 0) text += "  ETA " + formatDuration(sec / static_cast<double>(done_) * static_cast<double>(steps_ - done_));
  }
  const size_t width = text.size();
  if (width < drawnWidth_) text += std::string(drawnWidth_ - width, ' ');
  drawnWidth_ = width;
  std::fprintf(stderr, "\r%s", text.c_str());
  std::fflush(stderr);
}

void Progress::endEpoch(const std::string& text) {
  if (quiet_) return;
  if (bar_ && drawnWidth_ > 0) std::fprintf(stderr, "\r%s\r", std::string(drawnWidth_, ' ').c_str());
  drawnWidth_ = 0;
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

void Progress::clear() {
  if (bar_ && drawnWidth_ > 0) std::fprintf(stderr, "\r%s\r", std::string(drawnWidth_, ' ').c_str());
  drawnWidth_ = 0;
}

void Progress::line(const std::string& text) { endEpoch(text); }

}  // namespace gnn::app
