// FixedSizeNeighborLoader: PopTorch Geometric's FixedSizeNeighborLoader: PyG's NeighborLoader (loaders/
// NeighborSampler.h) with every batch padded to the same node and edge counts (one sampled graph plus one
// padding graph, numGraphs = 2), so a compiled step sees one shape. Each epoch the input nodes are cut into
// batches of batchSize seeds (shuffled by (seed, epoch) when asked; the last batch may be short), each batch's
// neighbourhood is sampled with draws keyed by (seed, epoch, node), and the sampled subgraph is collated with
// FixedSizeCollator. In a batch:
//
//   rows 0 .. numSeeds-1        the seeds (PyG's first batch_size rows); nodeIndex = n_id, graphIndex = the seeds'
//                               positions in the input nodes (input_id)
//   trainMask / validMask /     the graph's masks on the seed rows only, 0 elsewhere: a loss over trainMask is
//   testMask                    PyG's loss over out[:batch_size]
//
// Sizes: fromLoader() is PopTorch Geometric's FixedSizeOptions.from_loader (the largest sampled batch over up to
// sampleLimit batches, plus one node and one edge for the padding graph), with a margin for the draws of later
// epochs; worstCase() is the bound from batch size and fan-outs, which never trims. A batch larger than the sizes
// is trimmed from its end (the last hop's nodes and edges first; the seeds never), as PopTorch Geometric's
// TrimNodesAndEdges, and the trimmed rows are counted in report(); OverSizeStrategy::Error refuses it instead.
//
//   auto sampler = std::make_shared<NeighborSampler>(graph->edgeIndex, graph->numNodes);
//   FixedSizeNeighborLoader::Options o;  o.numNeighbors = {15, 10, 5};  o.batchSize = 1024;
//   FixedSizeNeighborLoader loader(graph, sampler, trainIdx, o,
//                                  FixedSizeNeighborLoader::fromLoader(*sampler, trainIdx, o));
//   loader.startEpoch(epoch);
//   for (Batch b; loader.next(b);) step(b);
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "data/Graph.h"
#include "loaders/Batch.h"
#include "loaders/EpochSampler.h"
#include "loaders/FixedSizeCollator.h"
#include "loaders/NodeBatchLoader.h"
#include "loaders/NeighborSampler.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/PaddingReport.h"
#include "loaders/Prefetcher.h"

namespace gnn {

class FixedSizeNeighborLoader : public NodeBatchLoader {
 public:
  struct Options {
    std::vector<int64_t> numNeighbors = {15, 10, 5};  // per hop; -1 = every neighbour
    int64_t batchSize = 1024;
    bool shuffle = true;
    bool replace = false;
    uint64_t seed = 0;
    int64_t prefetch = 1;  // batches sampled ahead on the loader's thread (0: on the caller's)
    /// TrimNodesAndEdges (PopTorch Geometric's default for this loader) or Error.
    OverSizeStrategy overSize = OverSizeStrategy::TrimNodesAndEdges;
    /// Called with each batch once collated, on the loader's thread when prefetching (as ClusterLoader's).
    std::function<void(const Batch&)> prepare;
  };

  /// graph: node-level y and split masks travel with the nodes; inputNodes: the seeds an epoch visits (a split's
  /// ids, or any list of distinct ids).
  FixedSizeNeighborLoader(std::shared_ptr<const Graph> graph, std::shared_ptr<const NeighborSampler> sampler,
                          std::vector<int64_t> inputNodes, Options options, FixedSizeOptions fixed);
  ~FixedSizeNeighborLoader() override;

  /// The largest of up to sampleLimit batches of epoch 0 (sampled in parallel), times 1 + margin, plus the
  /// padding graph's node and edge; never above worstCase().
  static FixedSizeOptions fromLoader(const NeighborSampler& sampler,
                                     const std::vector<int64_t>& inputNodes, const Options& options,
                                     int64_t sampleLimit = 1000, double margin = 0.05);
  /// Room for any batch: NeighborSampler::worstCase plus the padding graph's node and edge.
  static FixedSizeOptions worstCase(const NeighborSampler& sampler, const Options& options);

  void startEpoch(int64_t epoch) override;
  bool next(Batch& out) override;
  int64_t numBatches() const override;
  /// Batch i of the current epoch, made on the calling thread (thread-safe).
  Batch collateBatch(int64_t i) const;
  /// The seeds of batch i of the current epoch.
  std::vector<int64_t> batchSeeds(int64_t i) const;
  /// Batches handed out so far in this epoch, with the nodes and edges trimmed.
  const PaddingReport& report() const override { return report_; }
  const FixedSizeOptions& fixedSizes() const { return fixed_; }
  const Options& options() const { return options_; }

 private:
  struct Item {
    Batch batch;
    int64_t trimmedNodes = 0, trimmedEdges = 0;
  };
  Item makeItem(int64_t i) const;

  std::shared_ptr<const Graph> graph_;
  std::shared_ptr<const NeighborSampler> sampler_;
  std::vector<int64_t> inputNodes_;
  Options options_;
  FixedSizeOptions fixed_;
  EpochSampler order_;
  FixedSizeCollator collator_;
  int64_t epoch_ = 0;
  std::vector<int64_t> epochOrder_;
  PaddingReport report_;
  Prefetcher<Item> prefetcher_;
};

/// The Graph of a sampled subgraph of `graph`: its nodes' and edges' fields, and the split masks kept on the seed
/// rows only. Exposed for tests and for layer-wise inference.
Graph sampledGraph(const Graph& graph, const SampledSubgraph& sub);

}  // namespace gnn
