#include "gnn/autograd/Block.h"

#include <memory>
#include <mutex>
#include <unordered_set>

#include "gnn/autograd/OpInfo.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn {

const char* internName(const std::string& name) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();  // never destroyed: pointers outlive statics
  std::lock_guard<std::mutex> lock(mu);
  return names->insert(name).first->c_str();
}

BlockScope::BlockScope(const std::string& name) : previous_(ExecutionContext::current().block()) {
  ExecutionContext& ctx = ExecutionContext::current();
  ctx.setBlock(internName(name));
  // Work between blocks (the model's own glue) is not charged to the block's first op.
  if (ctx.observer()) ctx.setMark(std::chrono::steady_clock::now());
}

BlockScope::~BlockScope() { ExecutionContext::current().setBlock(previous_); }

}  // namespace gnn
