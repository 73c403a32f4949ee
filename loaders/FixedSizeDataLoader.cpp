#include "loaders/FixedSizeDataLoader.h"

#include <algorithm>

namespace gnn {
namespace {
BatchPlanner::Options plannerOptions(const FixedSizeDataLoader::Options& o) {
  BatchPlanner::Options p;
  p.strategy = o.strategy;
  p.overSize = o.overSize;
  p.packWindow = o.packWindow;
  p.dropLast = o.dropLast;
  p.nodeLevelTargets = o.nodeLevelTargets;
  return p;
}
}  // namespace

FixedSizeDataLoader::FixedSizeDataLoader(std::shared_ptr<const Dataset> dataset, FixedSizeOptions fixed, Options options)
    : dataset_(std::move(dataset)),
      fixed_(fixed),
      options_(options),
      sampler_(static_cast<int64_t>(dataset_ ? dataset_->size() : 0), options.shuffle, options.seed, options.classBalance),
      planner_(dataset_, fixed, plannerOptions(options)),
      collator_(fixed, options.nodeLevelTargets) {
  GNN_CHECK_ARG(options_.microBatchesPerRequest >= 1, "FixedSizeDataLoader: microBatchesPerRequest must be >= 1");
  GNN_CHECK_ARG(options_.shard.whole() || options_.shard.perRequest == options_.microBatchesPerRequest,
                "FixedSizeDataLoader: the shard's requests hold ", options_.shard.perRequest,
                " micro-batches but microBatchesPerRequest is ", options_.microBatchesPerRequest);
}

FixedSizeDataLoader::~FixedSizeDataLoader() { prefetcher_.stop(); }

void FixedSizeDataLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();  // the worker reads plan_: stop it before replacing the plan
  plan_ = planner_.plan(sampler_.order(epoch), sampler_, epoch);
  nextRequestIndex_ = 0;
  local_.clear();
  requestSizes_.clear();
  const int64_t per = options_.microBatchesPerRequest;
  if (options_.shard.whole()) {
    for (int64_t q = 0; q * per < numBatches(); ++q) {
      const int64_t n = std::min(per, numBatches() - q * per);
      requestSizes_.push_back({n, n});
    }
    prefetcher_.start(numBatches(), [this](int64_t i) { return collateBatch(i); }, options_.prefetch);
    return;
  }
  int64_t q = 0;
  for (const auto& mine : options_.shard.requests(numBatches())) {
    local_.insert(local_.end(), mine.begin(), mine.end());
    requestSizes_.push_back({static_cast<int64_t>(mine.size()), std::min(per, numBatches() - q * per)});
    ++q;
  }
  prefetcher_.start(static_cast<int64_t>(local_.size()), [this](int64_t i) { return collateBatch(local_[static_cast<size_t>(i)]); },
                    options_.prefetch);
}

Batch FixedSizeDataLoader::collateBatch(int64_t i) const {
  const auto& planned = plan_.batches.at(static_cast<size_t>(i));
  std::vector<Graph> graphs;
  std::vector<const Graph*> ptrs;
  std::vector<int64_t> indices;
  graphs.reserve(planned.size());
  for (const PlannedGraph& g : planned) {
    graphs.push_back(g.trimmed ? *g.trimmed : dataset_->get(static_cast<size_t>(g.index)));
    indices.push_back(g.index);
  }
  for (const Graph& g : graphs) ptrs.push_back(&g);
  return collator_.collate(ptrs, indices);
}

bool FixedSizeDataLoader::next(Batch& out) { return prefetcher_.next(out); }

bool FixedSizeDataLoader::nextRequest(Batch& out) {
  if (nextRequestIndex_ >= requestSizes_.size()) return false;
  const auto [k, whole] = requestSizes_[nextRequestIndex_++];
  lastRequest_ = whole;
  std::vector<Batch> parts;
  parts.reserve(static_cast<size_t>(k));
  Batch b;
  while (static_cast<int64_t>(parts.size()) < k && next(b)) parts.push_back(std::move(b));
  GNN_ASSERT(static_cast<int64_t>(parts.size()) == k, "FixedSizeDataLoader: the epoch ended inside a request");
  out = parts.empty() ? Batch() : parts.size() == 1 ? std::move(parts.front()) : stackMicroBatches(parts);
  return true;
}

}  // namespace gnn
