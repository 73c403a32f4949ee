#include "app/StopSignal.h"

#include <atomic>
#include <csignal>

namespace gnn::app {
namespace {
std::atomic<int> gSignal{0};

extern "C" void onStopSignal(int sig) {
  // Only async-signal-safe work here: record the signal and restore the default action, so a second one ends
  // the process.
  gSignal.store(sig, std::memory_order_relaxed);
  std::signal(sig, SIG_DFL);
}
}  // namespace

void StopSignal::install() {
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
}
bool StopSignal::requested() { return gSignal.load(std::memory_order_relaxed) != 0; }
int StopSignal::signal() { return gSignal.load(std::memory_order_relaxed); }
void StopSignal::reset() { gSignal.store(0, std::memory_order_relaxed); }

}  // namespace gnn::app
