#include "loaders/HeteroFixedSizeNeighborLoader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <tuple>
#include <utility>

#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

void checkHeteroOptions(const HeteroFixedSizeNeighborLoader::Options& o) {
  GNN_CHECK_ARG(o.batchSize >= 1, "HeteroFixedSizeNeighborLoader: batchSize = ", o.batchSize, " must be >= 1");
  GNN_CHECK_ARG(o.overSize == OverSizeStrategy::TrimNodesAndEdges || o.overSize == OverSizeStrategy::Error,
                "HeteroFixedSizeNeighborLoader: over-size strategy must be TrimNodesAndEdges or Error");
}

// Rows `ids` of `src` (any dtype, any trailing shape) into the first rows of a [rows, ...] tensor filled with pad.
Tensor gatherPadded(const Tensor& src, const std::vector<int64_t>& ids, int64_t rows, double pad) {
  Shape shape = src.shape();
  shape[0] = rows;
  Tensor out = Tensor::full(shape, pad, src.dtype());
  const size_t rowBytes = static_cast<size_t>(src.cols()) * dtypeSize(src.dtype());
  const auto* from = static_cast<const unsigned char*>(src.raw());
  auto* to = static_cast<unsigned char*>(out.raw());
  for (size_t r = 0; r < ids.size(); ++r)
    std::memcpy(to + r * rowBytes, from + static_cast<size_t>(ids[r]) * rowBytes, rowBytes);
  return out;
}

Tensor prefixOnes(int64_t rows, int64_t real) {
  Tensor m = Tensor::zeros({rows}, DType::U8);
  std::fill(m.data<uint8_t>(), m.data<uint8_t>() + real, uint8_t{1});
  return m;
}

}  // namespace

std::string HeteroFixedSizeNeighborLoader::Sizes::toString() const {
  std::ostringstream os;
  const char* sep = "";
  os << "nodes {";
  for (const auto& [t, n] : numNodes) os << std::exchange(sep, ", ") << t << ": " << n;
  sep = "";
  os << "}, edges {";
  for (const auto& [t, n] : numEdges) os << std::exchange(sep, ", ") << t.str() << ": " << n;
  os << "}";
  return os.str();
}

HeteroFixedSizeNeighborLoader::HeteroFixedSizeNeighborLoader(std::shared_ptr<const HeteroGraph> graph,
                                                             std::shared_ptr<const HeteroNeighborSampler> sampler,
                                                             std::string inputType, std::vector<int64_t> inputNodes,
                                                             Options options, Sizes sizes)
    : graph_(std::move(graph)),
      sampler_(std::move(sampler)),
      inputType_(std::move(inputType)),
      inputNodes_(std::move(inputNodes)),
      options_(std::move(options)),
      sizes_(std::move(sizes)),
      order_(static_cast<int64_t>(inputNodes_.size()), options_.shuffle, options_.seed) {
  GNN_CHECK_ARG(graph_ && sampler_, "HeteroFixedSizeNeighborLoader: no graph or no sampler");
  checkHeteroOptions(options_);
  GNN_CHECK_ARG(graph_->nodeTypes() == sampler_->nodeTypes() && graph_->edgeTypes() == sampler_->edgeTypes(),
                "HeteroFixedSizeNeighborLoader: the sampler's graph has other types than this graph");
  const int64_t input = sampler_->nodeTypeIndex(inputType_);
  sampler_->fanouts(options_.numNeighbors);  // refuses bad fan-outs now rather than in the first batch
  for (const std::string& t : sampler_->nodeTypes()) {
    const auto it = sizes_.numNodes.find(t);
    GNN_CHECK_ARG(it != sizes_.numNodes.end() && it->second >= 1, "HeteroFixedSizeNeighborLoader: node type '", t,
                  "' needs a size of at least 1 (its padding row): set sizes.numNodes[\"", t, "\"]");
    nodeRows_.push_back(it->second);
  }
  for (const EdgeType& e : sampler_->edgeTypes()) {
    const auto it = sizes_.numEdges.find(e);
    GNN_CHECK_ARG(it != sizes_.numEdges.end() && it->second >= 1, "HeteroFixedSizeNeighborLoader: edge type ",
                  e.str(), " needs a size of at least 1 (its padding edge)");
    edgeRows_.push_back(it->second);
  }
  for (const auto& [t, n] : sizes_.numNodes)
    GNN_CHECK_ARG(graph_->hasNodeType(t), "HeteroFixedSizeNeighborLoader: sizes name node type '", t,
                  "', which the graph does not have");
  for (const auto& [e, n] : sizes_.numEdges)
    GNN_CHECK_ARG(graph_->hasEdgeType(e), "HeteroFixedSizeNeighborLoader: sizes name edge type ", e.str(),
                  ", which the graph does not have");
  const int64_t seeds = std::min<int64_t>(options_.batchSize, static_cast<int64_t>(inputNodes_.size()));
  GNN_CHECK_ARG(nodeRows_[static_cast<size_t>(input)] - 1 >= seeds, "HeteroFixedSizeNeighborLoader: ",
                nodeRows_[static_cast<size_t>(input)], " rows of '", inputType_, "' leave no room for ", seeds,
                " seeds and the padding row: set sizes.numNodes[\"", inputType_, "\"] >= ", seeds + 1);
  const int64_t n = sampler_->numNodes(input);
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  for (int64_t v : inputNodes_) {
    GNN_CHECK_ARG(v >= 0 && v < n, "HeteroFixedSizeNeighborLoader: input node ", v, " is outside node type '",
                  inputType_, "''s ", n, " nodes");
    GNN_CHECK_ARG(!seen[static_cast<size_t>(v)], "HeteroFixedSizeNeighborLoader: input node ", v, " is listed twice");
    seen[static_cast<size_t>(v)] = 1;
  }
}

HeteroFixedSizeNeighborLoader::~HeteroFixedSizeNeighborLoader() { prefetcher_.stop(); }

HeteroFixedSizeNeighborLoader::Sizes HeteroFixedSizeNeighborLoader::worstCase(const HeteroNeighborSampler& sampler,
                                                                              const std::string& inputType,
                                                                              const Options& options) {
  checkHeteroOptions(options);
  const auto [nodes, edges] = sampler.worstCase(inputType, options.batchSize, options.numNeighbors);
  Sizes s;
  for (size_t t = 0; t < nodes.size(); ++t) s.numNodes[sampler.nodeTypes()[t]] = nodes[t] + 1;
  for (size_t e = 0; e < edges.size(); ++e) s.numEdges[sampler.edgeTypes()[e]] = edges[e] + 1;
  return s;
}

HeteroFixedSizeNeighborLoader::Sizes HeteroFixedSizeNeighborLoader::fromLoader(
    const HeteroNeighborSampler& sampler, const std::string& inputType, const std::vector<int64_t>& inputNodes,
    const Options& options, int64_t sampleLimit, double margin) {
  checkHeteroOptions(options);
  GNN_CHECK_ARG(sampleLimit >= 1 && margin >= 0, "HeteroFixedSizeNeighborLoader::fromLoader: sampleLimit = ",
                sampleLimit, ", margin = ", margin);
  const std::vector<int64_t> epochOrder =
      EpochSampler(static_cast<int64_t>(inputNodes.size()), options.shuffle, options.seed).order(0);
  const int64_t batches = (static_cast<int64_t>(inputNodes.size()) + options.batchSize - 1) / options.batchSize;
  const int64_t count = std::min(batches, sampleLimit);
  const size_t T = sampler.nodeTypes().size(), R = sampler.edgeTypes().size();
  // Counts per batch, then the largest per type: the same for any thread count.
  std::vector<std::vector<int64_t>> counts(static_cast<size_t>(count), std::vector<int64_t>(T + R, 0));
  parallelFor(count, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const HeteroSampledSubgraph s =
          sampler.sample(inputType, batchOfOrder(inputNodes, epochOrder, options.batchSize, i).first,
                         options.numNeighbors, options.seed, 0, options.replace);
      auto& c = counts[static_cast<size_t>(i)];
      for (size_t t = 0; t < T; ++t) c[t] = static_cast<int64_t>(s.nodes[t].size());
      for (size_t r = 0; r < R; ++r) c[T + r] = static_cast<int64_t>(s.src[r].size());
    }
  });
  const Sizes bound = worstCase(sampler, inputType, options);
  auto sized = [&](size_t k, int64_t limit) {
    int64_t most = 0;
    for (const auto& c : counts) most = std::max(most, c[k]);
    return std::min(limit, static_cast<int64_t>(std::ceil(static_cast<double>(most) * (1 + margin))) + 1);
  };
  Sizes s;
  for (size_t t = 0; t < T; ++t) {
    const std::string& name = sampler.nodeTypes()[t];
    s.numNodes[name] = sized(t, bound.numNodes.at(name));
  }
  for (size_t r = 0; r < R; ++r) {
    const EdgeType& et = sampler.edgeTypes()[r];
    s.numEdges[et] = sized(T + r, bound.numEdges.at(et));
  }
  return s;
}

int64_t HeteroFixedSizeNeighborLoader::numBatches() const {
  return (static_cast<int64_t>(inputNodes_.size()) + options_.batchSize - 1) / options_.batchSize;
}

void HeteroFixedSizeNeighborLoader::startEpoch(int64_t epoch) {
  prefetcher_.stop();
  epoch_ = epoch;
  epochOrder_ = order_.order(epoch);
  report_ = PaddingReport();
  prefetcher_.start(numBatches(), [this](int64_t i) { return makeItem(i); }, options_.prefetch);
}

std::vector<int64_t> HeteroFixedSizeNeighborLoader::batchSeeds(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "HeteroFixedSizeNeighborLoader: call startEpoch() first");
  GNN_CHECK_ARG(i >= 0 && i < numBatches(), "HeteroFixedSizeNeighborLoader: batch ", i, " of ", numBatches());
  return batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i).first;
}

std::pair<int64_t, int64_t> HeteroFixedSizeNeighborLoader::fitToSizes(HeteroSampledSubgraph& sub, int64_t i) const {
  const size_t T = sub.nodes.size(), R = sub.src.size();
  bool over = false;
  for (size_t t = 0; t < T; ++t) over = over || static_cast<int64_t>(sub.nodes[t].size()) > nodeRows_[t] - 1;
  for (size_t r = 0; r < R; ++r) over = over || static_cast<int64_t>(sub.src[r].size()) > edgeRows_[r] - 1;
  if (!over) return {0, 0};
  if (options_.overSize == OverSizeStrategy::Error) {
    std::ostringstream why;
    for (size_t t = 0; t < T; ++t)
      if (static_cast<int64_t>(sub.nodes[t].size()) > nodeRows_[t] - 1)
        why << " " << sub.nodes[t].size() << " nodes of '" << sub.nodeTypes[t] << "' (room for " << nodeRows_[t] - 1
            << ");";
    for (size_t r = 0; r < R; ++r)
      if (static_cast<int64_t>(sub.src[r].size()) > edgeRows_[r] - 1)
        why << " " << sub.src[r].size() << " edges of " << sub.edgeTypes[r].str() << " (room for " << edgeRows_[r] - 1
            << ");";
    invalidArgument("HeteroFixedSizeNeighborLoader: batch ", i, " of epoch ", epoch_, " sampled", why.str(),
                    " raise those sizes (worstCase() never trims) or trim");
  }
  // Each type keeps its first rows (the deepest hop's go first), each edge type the edges between kept rows in
  // order up to its room; the per-hop counts follow, as each hop's rows and edges stay contiguous.
  int64_t cutNodes = 0, cutEdges = 0;
  std::vector<int64_t> keep(T);
  for (size_t t = 0; t < T; ++t) {
    keep[t] = std::min(static_cast<int64_t>(sub.nodes[t].size()), nodeRows_[t] - 1);
    cutNodes += static_cast<int64_t>(sub.nodes[t].size()) - keep[t];
    sub.nodes[t].resize(static_cast<size_t>(keep[t]));
    int64_t left = keep[t];
    for (int64_t& c : sub.nodesPerHop[t]) {
      c = std::min(c, left);
      left -= c;
    }
  }
  for (size_t r = 0; r < R; ++r) {
    const int64_t ks = keep[static_cast<size_t>(sub.nodeTypeIndex(sub.edgeTypes[r].src))];
    const int64_t kd = keep[static_cast<size_t>(sub.nodeTypeIndex(sub.edgeTypes[r].dst))];
    std::vector<int64_t>& src = sub.src[r];
    std::vector<int64_t>& dst = sub.dst[r];
    std::vector<int64_t>& ids = sub.edgeIds[r];
    std::vector<int64_t>& perHop = sub.edgesPerHop[r];
    size_t w = 0, hop = 0;
    int64_t hopEnd = perHop.empty() ? 0 : perHop[0];
    std::vector<int64_t> keptPerHop(perHop.size(), 0);
    for (size_t k = 0; k < src.size(); ++k) {
      while (static_cast<int64_t>(k) >= hopEnd && hop + 1 < perHop.size()) hopEnd += perHop[++hop];
      if (src[k] < ks && dst[k] < kd && static_cast<int64_t>(w) < edgeRows_[r] - 1) {
        src[w] = src[k];
        dst[w] = dst[k];
        ids[w] = ids[k];
        ++w;
        if (!keptPerHop.empty()) ++keptPerHop[hop];
      }
    }
    cutEdges += static_cast<int64_t>(src.size() - w);
    src.resize(w);
    dst.resize(w);
    ids.resize(w);
    perHop = keptPerHop;
  }
  return {cutNodes, cutEdges};
}

HeteroBatch HeteroFixedSizeNeighborLoader::collate(const HeteroSampledSubgraph& sub) const {
  HeteroBatch b;
  b.targetType = inputType_;
  b.numSeeds = sub.numSeeds;
  for (size_t t = 0; t < sub.nodes.size(); ++t) {
    const NodeStore& store = graph_->node(sub.nodeTypes[t]);
    HeteroBatch::NodeRows n;
    n.type = sub.nodeTypes[t];
    n.numNodes = nodeRows_[t];
    n.numRealNodes = static_cast<int64_t>(sub.nodes[t].size());
    if (store.x.defined()) n.x = gatherPadded(store.x, sub.nodes[t], n.numNodes, sizes_.nodePadValue);
    n.nodeId = Tensor::zeros({n.numNodes}, DType::I64);
    std::copy(sub.nodes[t].begin(), sub.nodes[t].end(), n.nodeId.data<int64_t>());
    n.nodesMask = prefixOnes(n.numNodes, n.numRealNodes);
    n.nodesPerHop = sub.nodesPerHop[t];
    if (static_cast<int64_t>(t) == sub.inputType) {
      if (store.y.defined()) b.y = gatherPadded(store.y, sub.nodes[t], n.numNodes, sizes_.labelPadValue);
      b.seedMask = prefixOnes(n.numNodes, sub.numSeeds);
    }
    b.nodes.push_back(std::move(n));
  }
  for (size_t r = 0; r < sub.src.size(); ++r) {
    const EdgeStore& store = graph_->edge(sub.edgeTypes[r]);
    HeteroBatch::EdgeRows e;
    e.type = sub.edgeTypes[r];
    e.numEdges = edgeRows_[r];
    e.numRealEdges = static_cast<int64_t>(sub.src[r].size());
    // Padding edges join the first padding rows of the source and the destination type.
    const int64_t padSrc = static_cast<int64_t>(sub.nodes[static_cast<size_t>(sub.nodeTypeIndex(e.type.src))].size());
    const int64_t padDst = static_cast<int64_t>(sub.nodes[static_cast<size_t>(sub.nodeTypeIndex(e.type.dst))].size());
    e.edgeIndex = Tensor::empty({2, e.numEdges}, DType::I64);
    int64_t* ei = e.edgeIndex.data<int64_t>();
    std::copy(sub.src[r].begin(), sub.src[r].end(), ei);
    std::fill(ei + e.numRealEdges, ei + e.numEdges, padSrc);
    std::copy(sub.dst[r].begin(), sub.dst[r].end(), ei + e.numEdges);
    std::fill(ei + e.numEdges + e.numRealEdges, ei + 2 * e.numEdges, padDst);
    if (store.edgeAttr.defined())
      e.edgeAttr = gatherPadded(store.edgeAttr, sub.edgeIds[r], e.numEdges, sizes_.edgePadValue);
    e.edgesMask = prefixOnes(e.numEdges, e.numRealEdges);
    e.edgeIds = sub.edgeIds[r];
    e.edgesPerHop = sub.edgesPerHop[r];
    b.edges.push_back(std::move(e));
  }
  return b;
}

HeteroFixedSizeNeighborLoader::Item HeteroFixedSizeNeighborLoader::makeItem(int64_t i) const {
  GNN_CHECK_ARG(!epochOrder_.empty() || inputNodes_.empty(), "HeteroFixedSizeNeighborLoader: call startEpoch() first");
  auto [seeds, inputIds] = batchOfOrder(inputNodes_, epochOrder_, options_.batchSize, i);
  HeteroSampledSubgraph sub =
      sampler_->sample(inputType_, seeds, options_.numNeighbors, options_.seed, epoch_, options_.replace);
  Item item;
  std::tie(item.trimmedNodes, item.trimmedEdges) = fitToSizes(sub, i);
  item.batch = collate(sub);
  item.batch.inputId = std::move(inputIds);
  return item;
}

HeteroBatch HeteroFixedSizeNeighborLoader::collateBatch(int64_t i) const { return makeItem(i).batch; }

bool HeteroFixedSizeNeighborLoader::next(HeteroBatch& out) {
  Item item;
  if (!prefetcher_.next(item)) return false;
  ++report_.batches;
  for (const HeteroBatch::NodeRows& n : item.batch.nodes) {
    report_.realNodes += n.numRealNodes;
    report_.totalNodes += n.numNodes;
  }
  for (const HeteroBatch::EdgeRows& e : item.batch.edges) {
    report_.realEdges += e.numRealEdges;
    report_.totalEdges += e.numEdges;
  }
  report_.realGraphs += 1;
  report_.totalGraphs += 1;
  report_.trimmed += (item.trimmedNodes > 0 || item.trimmedEdges > 0) ? 1 : 0;
  report_.trimmedNodes += item.trimmedNodes;
  report_.trimmedEdges += item.trimmedEdges;
  out = std::move(item.batch);
  return true;
}

}  // namespace gnn
