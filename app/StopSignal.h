// StopSignal: SIGINT/SIGTERM turned into a request that long work polls between steps, so a run can finish
// the step it is in, save, and exit cleanly instead of dying mid-write. A second signal of the same kind
// exits at once (the default action), for a user who really wants out.
//
//   app::StopSignal::install();
//   for (...) { step(); if (app::StopSignal::requested()) { save(); throw app::Interrupted(app::StopSignal::signal()); } }
#pragma once
#include <stdexcept>
#include <string>

namespace gnn::app {

class StopSignal {
 public:
  /// Installs the handlers (idempotent).
  static void install();
  static bool requested();
  /// The signal received (SIGINT or SIGTERM), 0 when none.
  static int signal();
  /// For tests: forget a request.
  static void reset();
};

/// Thrown when work stops on a StopSignal; Program::run exits with 128 + signal.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, const std::string& what) : std::runtime_error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace gnn::app
