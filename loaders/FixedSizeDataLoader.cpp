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
  // Chunked epochs are read a window at a time: planned batches stay within one.
  if (o.chunks.enabled() && o.classBalance.empty() && p.packWindow == 0) p.packWindow = o.chunks.windowItems();
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
  if (options_.chunks.enabled()) sampler_.setChunks(options_.chunks);
  GNN_CHECK_ARG(!options_.readAhead || options_.readAhead->size() == static_cast<int64_t>(dataset_ ? dataset_->size() : 0),
                "FixedSizeDataLoader: the read-ahead covers ", options_.readAhead ? options_.readAhead->size() : 0,
                " graphs, the dataset holds ", dataset_ ? dataset_->size() : 0);
}

FixedSizeDataLoader::~FixedSizeDataLoader() { prefetcher_.stop(); }

void FixedSizeDataLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();  // the worker reads plan_: stop it before replacing the plan
  const bool chunked = options_.chunks.enabled() && !sampler_.balanced();
  chunkEpoch_ = chunked ? sampler_.chunkEpoch(epoch) : ChunkShuffle::Epoch();
  plan_ = planner_.plan(chunked ? chunkEpoch_.order : sampler_.order(epoch), sampler_, epoch);
  batchReach_.clear();
  fetched_ = released_ = 0;
  sinceRelease_ = 0;
  if (options_.readAhead && options_.readAhead->active()) {
    options_.readAhead->releaseAll();  // what the last epoch and the evaluations read
    options_.readAhead->setRandom(!chunked);
    if (chunked) {
      std::vector<int64_t> where(chunkEpoch_.order.size());
      for (size_t p = 0; p < chunkEpoch_.order.size(); ++p) where[static_cast<size_t>(chunkEpoch_.order[p])] = static_cast<int64_t>(p);
      for (const auto& batch : plan_.batches) {
        int64_t reach = 0;
        for (const PlannedGraph& g : batch) reach = std::max(reach, where[static_cast<size_t>(g.index)]);
        batchReach_.push_back(reach);
      }
    }
  }
  nextRequestIndex_ = 0;
  local_.clear();
  requestSizes_.clear();
  const int64_t per = options_.microBatchesPerRequest;
  if (options_.shard.whole()) {
    for (int64_t q = 0; q * per < numBatches(); ++q) {
      const int64_t n = std::min(per, numBatches() - q * per);
      requestSizes_.push_back({n, n});
    }
    prefetcher_.start(numBatches(), [this](int64_t i) {
      adviseBefore(i);
      return collateBatch(i);
    }, options_.prefetch);
    return;
  }
  int64_t q = 0;
  for (const auto& mine : options_.shard.requests(numBatches())) {
    local_.insert(local_.end(), mine.begin(), mine.end());
    requestSizes_.push_back({static_cast<int64_t>(mine.size()), std::min(per, numBatches() - q * per)});
    ++q;
  }
  prefetcher_.start(static_cast<int64_t>(local_.size()), [this](int64_t i) {
    adviseBefore(local_[static_cast<size_t>(i)]);
    return collateBatch(local_[static_cast<size_t>(i)]);
  }, options_.prefetch);
}

// Runs on the prefetch thread (or in next() without prefetch), batch by batch in order.
void FixedSizeDataLoader::adviseBefore(int64_t batch) {
  const MappedReadAhead* ra = options_.readAhead.get();
  if (!ra || !ra->active()) return;
  if (batchReach_.empty()) {
    sinceRelease_ += static_cast<int64_t>(plan_.batches.at(static_cast<size_t>(batch)).size());
    if (sinceRelease_ >= kReleaseEvery) {
      ra->releaseAll();
      sinceRelease_ = 0;
    }
    return;
  }
  const size_t windows = chunkEpoch_.windowStarts.size() - 1;
  const size_t w = chunkEpoch_.windowOf(batchReach_.at(static_cast<size_t>(batch)));
  const int64_t n = static_cast<int64_t>(chunkEpoch_.order.size());
  auto each = [&](size_t window, void (MappedReadAhead::*advice)(int64_t, int64_t) const) {
    for (int64_t c : chunkEpoch_.windowChunks(window))
      (ra->*advice)(options_.chunks.chunkBegin(c), options_.chunks.chunkEnd(c, n));
  };
  // The windows before the one being read are done: released (and marked first to reclaim). The kernel maps up to
  // 16 cached pages about every fault (fault-around), other windows' too, so a new window also drops the whole
  // mapping: the process then holds about the pages of the window it reads. The window being read and the next
  // one are asked for.
  const bool moved = released_ < w;
  for (; released_ < w; ++released_) each(released_, &MappedReadAhead::release);
  if (moved) ra->releaseAll();
  for (; fetched_ <= w + 1 && fetched_ < windows; ++fetched_) each(fetched_, &MappedReadAhead::willNeed);
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
