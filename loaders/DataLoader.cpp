#include "loaders/DataLoader.h"

#include <algorithm>

#include "loaders/FixedSizeCollator.h"

namespace gnn {

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, Options options)
    : dataset_(std::move(dataset)),
      options_(options),
      sampler_(static_cast<int64_t>(dataset_ ? dataset_->size() : 0), options.shuffle, options.seed) {
  GNN_CHECK_ARG(dataset_ != nullptr, "DataLoader: no dataset");
  GNN_CHECK_ARG(options_.batchSize >= 1, "DataLoader: batchSize must be >= 1, got ", options_.batchSize);
}

DataLoader::~DataLoader() { prefetcher_.stop(); }

int64_t DataLoader::numBatches() const {
  int64_t n = static_cast<int64_t>(dataset_->size()), b = options_.batchSize;
  return options_.dropLast ? n / b : (n + b - 1) / b;
}

void DataLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  order_ = sampler_.order(epoch);
  prefetcher_.start(numBatches(), [this](int64_t i) { return collateBatch(i); }, options_.prefetch);
}

bool DataLoader::next(Batch& out) { return prefetcher_.next(out); }

Batch DataLoader::collateBatch(int64_t i) const {
  GNN_CHECK_ARG(!order_.empty(), "DataLoader: call startEpoch() first");
  size_t begin = static_cast<size_t>(i * options_.batchSize);
  size_t end = std::min(order_.size(), begin + static_cast<size_t>(options_.batchSize));
  std::vector<Graph> graphs;
  std::vector<const Graph*> ptrs;
  std::vector<int64_t> indices(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                               order_.begin() + static_cast<std::ptrdiff_t>(end));
  graphs.reserve(end - begin);
  for (int64_t idx : indices) graphs.push_back(dataset_->get(static_cast<size_t>(idx)));
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return FixedSizeCollator::concatenate(ptrs, indices, options_.nodeLevelTargets);
}

}  // namespace gnn
