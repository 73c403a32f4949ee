// HeteroFixedSizeNeighborLoader: FixedSizeNeighborLoader (loaders/FixedSizeNeighborLoader.h) for a HeteroGraph: PyG's
// NeighborLoader on a HeteroData with input_nodes=(type, ids), its batches padded to fixed rows per node type and
// per edge type (loaders/HeteroBatch.h) so a compiled step sees one shape. Each epoch the input nodes are cut into
// batches of batchSize seeds (shuffled by (seed, epoch) when asked; the last batch may be short), each batch's
// neighbourhood is sampled by HeteroNeighborSampler with draws keyed by (seed, epoch, edge type, node), and:
//
//   per node type   real rows = the sampled nodes (the seeds first in the target type), x gathered (a type
//                   without features has only nodeId, for its embedding), then padding rows; nodesMask
//   per edge type   real edges in local ids, edgeAttr gathered, then padding edges from the source type's first
//                   padding row to the destination's; edgesMask
//   target type     y of every real row, seedMask on the seed rows (PyG's out[:batch_size])
//
// Sizes: every type's rows include one padding row (node or edge), as the homogeneous loader's padding graph adds
// one node and one edge. fromLoader() is PopTorch Geometric's FixedSizeOptions.from_loader per type (the largest
// count of each type over up to sampleLimit batches of epoch 0, with a margin for later epochs' draws, plus the
// padding row); worstCase() is the bound from batch size and fan-outs, which never trims. A batch larger than the
// sizes in some type is trimmed as the homogeneous loader trims, type by type: each node type keeps its first rows
// (the deepest hops go first; the seeds never), each edge type the edges between kept rows up to its size, in
// order (TrimNodesAndEdges, the default), and the trimmed rows are counted in report(); OverSizeStrategy::Error
// refuses the batch instead, naming the type.
//
//   auto sampler = std::make_shared<HeteroNeighborSampler>(*graph);
//   HeteroFixedSizeNeighborLoader::Options o;  o.numNeighbors = {15, 10};  o.batchSize = 1024;
//   auto sizes = HeteroFixedSizeNeighborLoader::fromLoader(*sampler, "paper", trainIdx, o);
//   HeteroFixedSizeNeighborLoader loader(graph, sampler, "paper", trainIdx, o, sizes);
//   loader.startEpoch(epoch);
//   for (HeteroBatch b; loader.next(b);) step(b);
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/HeteroGraph.h"
#include "loaders/EpochSampler.h"
#include "loaders/HeteroBatch.h"
#include "loaders/HeteroBatchCollate.h"
#include "loaders/HeteroBatchLoader.h"
#include "loaders/HeteroNeighborSampler.h"
#include "loaders/OverSizeStrategy.h"
#include "loaders/PaddingReport.h"
#include "loaders/Prefetcher.h"

namespace gnn {

class HeteroFixedSizeNeighborLoader : public HeteroBatchLoader {
 public:
  struct Options {
    HeteroNumNeighbors numNeighbors = {15, 10};  // one list for every edge type, or per edge type
    int64_t batchSize = 1024;
    bool shuffle = true;
    bool replace = false;
    uint64_t seed = 0;
    int64_t prefetch = 1;  // batches sampled ahead on the loader's thread (0: on the caller's)
    /// TrimNodesAndEdges (PopTorch Geometric's default for neighbour batches) or Error, as the homogeneous loader.
    OverSizeStrategy overSize = OverSizeStrategy::TrimNodesAndEdges;
  };

  /// Fixed rows of every node type and every edge type, one padding row included in each.
  using Sizes = HeteroBatchSizes;

  /// graph: the graph the sampler indexed; inputNodes: distinct ids of inputType's nodes, the seeds an epoch visits
  /// (a split's ids). Throws std::invalid_argument for an unknown type, a size missing or below one row, room for
  /// fewer than batchSize seeds, an input node out of range or listed twice, or bad options.
  HeteroFixedSizeNeighborLoader(std::shared_ptr<const HeteroGraph> graph,
                                std::shared_ptr<const HeteroNeighborSampler> sampler, std::string inputType,
                                std::vector<int64_t> inputNodes, Options options, Sizes sizes);
  ~HeteroFixedSizeNeighborLoader() override;

  /// Per type, the largest count over up to sampleLimit batches of epoch 0 (sampled in parallel), times
  /// 1 + margin, plus the padding row; never above worstCase().
  static Sizes fromLoader(const HeteroNeighborSampler& sampler, const std::string& inputType,
                          const std::vector<int64_t>& inputNodes, const Options& options, int64_t sampleLimit = 1000,
                          double margin = 0.05);
  /// Room for any batch: HeteroNeighborSampler::worstCase plus the padding row of every type.
  static Sizes worstCase(const HeteroNeighborSampler& sampler, const std::string& inputType, const Options& options);

  void startEpoch(int64_t epoch) override;
  /// The epoch's next batch; false once every batch was handed out.
  bool next(HeteroBatch& out) override;
  int64_t numBatches() const override;
  /// Batch i of the current epoch, made on the calling thread (thread-safe).
  HeteroBatch collateBatch(int64_t i) const;
  /// The seeds of batch i of the current epoch.
  std::vector<int64_t> batchSeeds(int64_t i) const;
  /// Batches handed out so far in this epoch: nodes and edges summed over the types (one graph per batch), with the
  /// nodes and edges trimmed.
  const PaddingReport& report() const override { return report_; }
  const Sizes& sizes() const override { return sizes_; }
  const Options& options() const { return options_; }

 private:
  CollatedHeteroBatch makeItem(int64_t i) const;
  // Cuts `sub` to the sizes (TrimNodesAndEdges) or refuses it (Error); returns the nodes and edges cut.
  std::pair<int64_t, int64_t> fitToSizes(HeteroSampledSubgraph& sub, int64_t i) const;

  std::shared_ptr<const HeteroGraph> graph_;
  std::shared_ptr<const HeteroNeighborSampler> sampler_;
  std::string inputType_;
  std::vector<int64_t> inputNodes_;
  Options options_;
  Sizes sizes_;
  HeteroBatchRows rows_;  // sizes_ in the graph's type order
  EpochSampler order_;
  int64_t epoch_ = 0;
  std::vector<int64_t> epochOrder_;
  PaddingReport report_;
  Prefetcher<CollatedHeteroBatch> prefetcher_;
};

}  // namespace gnn
