#include "loaders/PresampledLoader.h"

#include <utility>

#include "gnn/system/Check.h"
#include "gnn/system/SystemInfo.h"

namespace gnn {

PresampledLoader::PresampledLoader(std::unique_ptr<NodeBatchLoader> inner) : inner_(std::move(inner)) {
  GNN_CHECK_ARG(inner_ != nullptr, "PresampledLoader: no loader to presample");
}

void PresampledLoader::startEpoch(int64_t epoch) {
  Stopwatch sw;
  batches_.clear();
  reports_.clear();
  inner_->startEpoch(epoch);
  batches_.reserve(static_cast<size_t>(inner_->numBatches()));
  for (Batch b; inner_->next(b);) {
    batches_.push_back(std::move(b));
    reports_.push_back(inner_->report());
  }
  next_ = 0;
  report_ = PaddingReport();
  presampleMs_ = sw.ms();
}

bool PresampledLoader::next(Batch& out) {
  if (next_ >= batches_.size()) return false;
  out = std::move(batches_[next_]);
  batches_[next_] = Batch();  // its memory goes with the step, as a sampled batch's
  report_ = reports_[next_];
  ++next_;
  return true;
}

}  // namespace gnn
