// MemoryAccount: the tensor bytes charged to one execution context (a simulated IPU, a replica, a benchmark
// step). Every tensor buffer is charged, when it is allocated, to the account of the ExecutionContext current
// on the allocating thread, and credited back to that same account when it is freed, so the current and peak
// bytes of each context can be read while other contexts run. Thread-safe (atomic counters).
//
//   auto account = std::make_shared<MemoryAccount>("step");
//   ExecutionContext ctx;  ctx.setMemoryAccount(account);
//   { ContextScope use(ctx); trainStep(); }
//   account->peakBytes();                  // the most tensor bytes alive at once during the step
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace gnn {

class MemoryAccount {
 public:
  explicit MemoryAccount(std::string name = "") : name_(std::move(name)) {}
  MemoryAccount(const MemoryAccount&) = delete;
  MemoryAccount& operator=(const MemoryAccount&) = delete;

  const std::string& name() const { return name_; }
  /// Bytes of tensor buffers alive now / at most since creation or the last resetPeak().
  int64_t currentBytes() const { return current_.load(std::memory_order_relaxed); }
  int64_t peakBytes() const { return peak_.load(std::memory_order_relaxed); }
  /// Buffers allocated under this account since creation.
  int64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  /// Starts a new peak from the current bytes.
  void resetPeak() { peak_.store(currentBytes(), std::memory_order_relaxed); }

  void charge(int64_t bytes);
  void credit(int64_t bytes) { current_.fetch_sub(bytes, std::memory_order_relaxed); }

  /// The account of contexts that were given none: every tensor of the process not charged elsewhere.
  static const std::shared_ptr<MemoryAccount>& process();

 private:
  std::string name_;
  std::atomic<int64_t> current_{0}, peak_{0}, allocations_{0};
};

}  // namespace gnn
