#include "gnn/system/MemoryAccount.h"

namespace gnn {

void MemoryAccount::charge(int64_t bytes) {
  allocations_.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

const std::shared_ptr<MemoryAccount>& MemoryAccount::process() {
  // Never destroyed: tensors may be freed during static destruction.
  static auto* account = new std::shared_ptr<MemoryAccount>(std::make_shared<MemoryAccount>("process"));
  return *account;
}

}  // namespace gnn
