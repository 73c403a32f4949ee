#include "data/MappedFileGuard.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace gnn {

namespace {

// The registry is read from a signal handler, which may run while another thread registers or removes a
// mapping: it is a fixed array of slots, each published through an atomic state (no lock, no allocation).
constexpr int kFree = 0, kBusy = 1, kLive = 2;
constexpr size_t kPathBytes = 1024;

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uintptr_t> begin{0}, end{0};
  size_t pathLength = 0;
  char path[kPathBytes] = {};
};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<uintptr_t>::is_always_lock_free,
              "the SIGBUS handler reads the registry without locks");

Slot g_slots[MappedFileGuard::kCapacity];
struct sigaction g_previous {};
std::once_flag g_installed;

// The slot of the live mapping holding `address`, or nullptr.
const Slot* find(uintptr_t address) {
  for (const Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kLive &&
        address >= s.begin.load(std::memory_order_relaxed) && address < s.end.load(std::memory_order_relaxed))
      return &s;
  return nullptr;
}

void say(const char* text, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}
void say(const char* text) {
  size_t n = 0;
  while (text[n]) ++n;
  say(text, n);
}

// Async-signal-safe only: write(2), sigaction, raise and _exit.
void onSigbus(int sig, siginfo_t* info, void* context) {
  // si_code > 0: raised by the kernel for a faulting access, so si_addr is the address touched (a SIGBUS sent
  // with kill(2) has none).
  if (info != nullptr && info->si_code > 0)
    if (const Slot* s = find(reinterpret_cast<uintptr_t>(info->si_addr))) {
      if (program_invocation_short_name && *program_invocation_short_name) {
        say(program_invocation_short_name);
        say(": ");
      }
      say("error: ");
      say(s->path, s->pathLength);
      say(" changed while in use (the file was truncated or overwritten while this program read it; "
          "do not modify a dataset while a run uses it)\n");
      ::_exit(1);
    }
  // Not one of ours: whatever would have happened without this handler.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, context);
    return;
  }
  // An ignored SIGBUS from a fault would fault again forever; the kernel takes the default action then, too.
  const bool ignored = g_previous.sa_handler == SIG_IGN;
  if (ignored && !(info != nullptr && info->si_code > 0)) return;
  if (ignored || g_previous.sa_handler == SIG_DFL) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);  // delivered with the default action as soon as this handler returns
    return;
  }
  g_previous.sa_handler(sig);
}

void install() {
  struct sigaction sa {};
  sa.sa_sigaction = onSigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

MappedFileGuard::MappedFileGuard(const void* address, uint64_t bytes, const std::string& path) {
  std::call_once(g_installed, install);
  for (int i = 0; i < kCapacity; ++i) {
    Slot& s = g_slots[i];
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(address);
    s.begin.store(begin, std::memory_order_relaxed);
    s.end.store(begin + bytes, std::memory_order_relaxed);
    // A path longer than the slot is kept by its start and marked cut.
    s.pathLength = std::min(path.size(), kPathBytes);
    std::memcpy(s.path, path.data(), s.pathLength);
    if (path.size() > kPathBytes) std::memcpy(s.path + kPathBytes - 3, "...", 3);
    s.state.store(kLive, std::memory_order_release);
    slot_ = i;
    return;
  }
}

MappedFileGuard& MappedFileGuard::operator=(MappedFileGuard&& other) noexcept {
  if (this != &other) {
    reset();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void MappedFileGuard::reset() {
  if (slot_ < 0) return;
  Slot& s = g_slots[slot_];
  s.state.store(kBusy, std::memory_order_release);
  s.begin.store(0, std::memory_order_relaxed);
  s.end.store(0, std::memory_order_relaxed);
  s.state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

std::string MappedFileGuard::pathAt(const void* address) {
  const Slot* s = find(reinterpret_cast<uintptr_t>(address));
  return s ? std::string(s->path, s->pathLength) : std::string();
}

}  // namespace gnn
