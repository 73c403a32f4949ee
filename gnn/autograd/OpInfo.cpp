#include "gnn/autograd/OpInfo.h"

#include "gnn/system/ExecutionContext.h"

namespace gnn {

ObserverScope::ObserverScope(OpObserver& observer) : previous_(ExecutionContext::current().observer()) {
  ExecutionContext::current().setObserver(&observer);
  mark();
}
ObserverScope::~ObserverScope() { ExecutionContext::current().setObserver(previous_); }
void ObserverScope::mark() { ExecutionContext::current().setMark(std::chrono::steady_clock::now()); }

}  // namespace gnn
