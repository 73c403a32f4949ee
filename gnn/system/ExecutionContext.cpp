#include "gnn/system/ExecutionContext.h"

#include "gnn/system/Parallel.h"

namespace gnn {

ExecutionContext::ExecutionContext() : memory_(MemoryAccount::process()), mark_(std::chrono::steady_clock::now()) {}

namespace detail {
ExecutionContext*& currentContextSlot() {
  thread_local ExecutionContext* slot = nullptr;
  return slot;
}
}  // namespace detail

ExecutionContext& ExecutionContext::current() {
  ExecutionContext*& slot = detail::currentContextSlot();
  if (!slot) {
    thread_local ExecutionContext threadDefault;
    slot = &threadDefault;
  }
  return *slot;
}

int ExecutionContext::threads() const { return threads_ > 0 ? threads_ : defaultThreads(); }

void ExecutionContext::setMemoryAccount(std::shared_ptr<MemoryAccount> account) {
  memory_ = account ? std::move(account) : MemoryAccount::process();
}

Generator ExecutionContext::nextRandomStream() {
  // Each component goes through the mixer before the next is folded in, so (s, t, m, k) and any permutation
  // of the same numbers give unrelated streams.
  uint64_t h = Generator::mix64(key_.seed ^ 0x243f6a8885a308d3ULL);
  h = Generator::mix64(h ^ (key_.step * 0x9e3779b97f4a7c15ULL + 0x13198a2e03707344ULL));
  h = Generator::mix64(h ^ (key_.microBatch * 0xbf58476d1ce4e5b9ULL + 0xa4093822299f31d0ULL));
  h = Generator::mix64(h ^ (randomOps_++ * 0x94d049bb133111ebULL + 0x082efa98ec4e6c89ULL));
  return Generator(h);
}

Generator ExecutionContext::nextRoundingStream() {
  uint64_t h = Generator::mix64(key_.seed ^ 0x452821e638d01377ULL);
  h = Generator::mix64(h ^ (key_.step * 0x9e3779b97f4a7c15ULL + 0xbe5466cf34e90c6cULL));
  h = Generator::mix64(h ^ (key_.microBatch * 0xbf58476d1ce4e5b9ULL + 0xc0ac29b7c97c50ddULL));
  h = Generator::mix64(h ^ (roundingOps_++ * 0x94d049bb133111ebULL + 0x3f84d5b5b5470917ULL));
  return Generator(h);
}

int64_t ExecutionContext::roundStored(Tensor& t) {
  if (rounding_ == Rounding::None) return 0;
  if (rounding_ == Rounding::StochasticHalf) {
    const Generator g = nextRoundingStream();
    return roundTensorToHalf(t, rounding_, &g);
  }
  return roundTensorToHalf(t, rounding_);
}

ContextScope::ContextScope(ExecutionContext& ctx) : previous_(&ExecutionContext::current()) {
  detail::currentContextSlot() = &ctx;
}
ContextScope::~ContextScope() { detail::currentContextSlot() = previous_; }

}  // namespace gnn
