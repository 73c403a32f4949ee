#include "loaders/HeteroNeighborSampler.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "gnn/system/Check.h"
#include "gnn/system/Random.h"
#include "loaders/NeighborSampler.h"

namespace gnn {

namespace {

// The stream of node v's draws over edge type e in (seed, epoch): its own generator, so no other node's or edge
// type's draws move it. Constants differ from the homogeneous sampler's, so the two never share streams.
Generator heteroNodeStream(uint64_t seed, int64_t epoch, int64_t e, int64_t v) {
  const uint64_t k = Generator::mix64(seed * 0x9e3779b97f4a7c15ULL + 0x3c6ef372fe94f82bULL) ^
                     Generator::mix64(static_cast<uint64_t>(epoch) * 0xd1b54a32d192ed03ULL + 0xa54ff53a5f1d36f1ULL) ^
                     Generator::mix64(static_cast<uint64_t>(e) * 0x94d049bb133111ebULL + 0x510e527fade682d1ULL);
  return Generator(Generator::mix64(k ^ (static_cast<uint64_t>(v) * 0xbf58476d1ce4e5b9ULL)));
}

std::string edgeTypeName(const EdgeType& t) { return "(" + t.src + ", " + t.rel + ", " + t.dst + ")"; }

}  // namespace

int64_t HeteroSampledSubgraph::nodeTypeIndex(const std::string& type) const {
  const auto it = std::find(nodeTypes.begin(), nodeTypes.end(), type);
  GNN_CHECK_ARG(it != nodeTypes.end(), "HeteroSampledSubgraph: no node type '", type, "'");
  return it - nodeTypes.begin();
}

int64_t HeteroSampledSubgraph::edgeTypeIndex(const EdgeType& type) const {
  const auto it = std::find(edgeTypes.begin(), edgeTypes.end(), type);
  GNN_CHECK_ARG(it != edgeTypes.end(), "HeteroSampledSubgraph: no edge type ", edgeTypeName(type));
  return it - edgeTypes.begin();
}

Tensor HeteroSampledSubgraph::edgeIndex(int64_t e) const {
  GNN_CHECK_ARG(e >= 0 && e < static_cast<int64_t>(edgeTypes.size()), "HeteroSampledSubgraph: edge type ", e, " of ",
                edgeTypes.size());
  return edgeIndexOf(src[static_cast<size_t>(e)], dst[static_cast<size_t>(e)]);
}

HeteroNeighborSampler::HeteroNeighborSampler(const HeteroGraph& graph) {
  graph.validate();
  nodeTypes_ = graph.nodeTypes();
  edgeTypes_ = graph.edgeTypes();
  int64_t total = 0;
  for (const std::string& t : nodeTypes_) {
    const int64_t n = graph.numNodes(t);
    GNN_CHECK_ARG(n <= INT32_MAX, "HeteroNeighborSampler: node type '", t, "' has ", n,
                  " nodes: ids beyond 32 bits are not supported");
    numNodes_.push_back(n);
    nodeOffset_.push_back(total);
    total += n;
  }
  for (const EdgeType& et : edgeTypes_) {
    const EdgeStore& store = graph.edge(et);
    Csc c;
    c.srcType = nodeTypeIndex(et.src);
    c.dstType = nodeTypeIndex(et.dst);
    const int64_t E = store.numEdges(), nDst = numNodes_[static_cast<size_t>(c.dstType)];
    GNN_CHECK_ARG(E <= INT32_MAX, "HeteroNeighborSampler: edge type ", edgeTypeName(et), " has ", E,
                  " edges: ids beyond 32 bits are not supported");
    const int64_t* src = E ? store.edgeIndex.data<int64_t>() : nullptr;
    const int64_t* dst = E ? src + E : nullptr;
    c.inPtr.assign(static_cast<size_t>(nDst + 1), 0);
    for (int64_t e = 0; e < E; ++e) ++c.inPtr[static_cast<size_t>(dst[e]) + 1];
    for (int64_t v = 0; v < nDst; ++v) {
      c.maxInDegree = std::max(c.maxInDegree, c.inPtr[static_cast<size_t>(v) + 1]);
      c.inPtr[static_cast<size_t>(v) + 1] += c.inPtr[static_cast<size_t>(v)];
    }
    c.inSrc.resize(static_cast<size_t>(E));
    c.inEdge.resize(static_cast<size_t>(E));
    std::vector<int64_t> fill(c.inPtr.begin(), c.inPtr.end() - 1);
    for (int64_t e = 0; e < E; ++e) {  // stable: a destination's edges keep their order, as PyG's index_sort
      const int64_t q = fill[static_cast<size_t>(dst[e])]++;
      c.inSrc[static_cast<size_t>(q)] = static_cast<int32_t>(src[e]);
      c.inEdge[static_cast<size_t>(q)] = static_cast<int32_t>(e);
    }
    csc_.push_back(std::move(c));
  }
}

int64_t HeteroNeighborSampler::nodeTypeIndex(const std::string& type) const {
  const auto it = std::find(nodeTypes_.begin(), nodeTypes_.end(), type);
  if (it == nodeTypes_.end()) {
    std::string known;
    for (const std::string& t : nodeTypes_) known += (known.empty() ? "" : ", ") + t;
    invalidArgument("HeteroNeighborSampler: no node type '", type, "' (the graph has ", known, ")");
  }
  return it - nodeTypes_.begin();
}

std::vector<std::vector<int64_t>> HeteroNeighborSampler::fanouts(const HeteroNumNeighbors& numNeighbors) const {
  std::vector<std::vector<int64_t>> fan(edgeTypes_.size());
  std::vector<uint8_t> given(edgeTypes_.size(), 0);
  if (!numNeighbors.isDict) {
    std::fill(fan.begin(), fan.end(), numNeighbors.all);
  } else {
    for (const auto& [type, list] : numNeighbors.perType) {
      const auto it = std::find(edgeTypes_.begin(), edgeTypes_.end(), type);
      GNN_CHECK_ARG(it != edgeTypes_.end(), "HeteroNeighborSampler: numNeighbors names edge type ", edgeTypeName(type),
                    ", which the graph does not have");
      const size_t e = static_cast<size_t>(it - edgeTypes_.begin());
      GNN_CHECK_ARG(!given[e], "HeteroNeighborSampler: numNeighbors lists edge type ", edgeTypeName(type), " twice");
      given[e] = 1;
      fan[e] = list;
    }
    for (size_t e = 0; e < edgeTypes_.size(); ++e)
      if (!given[e]) {
        GNN_CHECK_ARG(numNeighbors.fallback.has_value(), "HeteroNeighborSampler: missing number of neighbors for edge "
                      "type ", edgeTypeName(edgeTypes_[e]), " (list it, or give a default for the types not listed)");
        fan[e] = *numNeighbors.fallback;
      }
  }
  for (size_t e = 0; e < fan.size(); ++e) {
    GNN_CHECK_ARG(fan[e].size() == fan[0].size(), "HeteroNeighborSampler: number of hops must be the same across "
                  "all edge types (", edgeTypeName(edgeTypes_[0]), ": ", fan[0].size(), ", ",
                  edgeTypeName(edgeTypes_[e]), ": ", fan[e].size(), ")");
    for (int64_t f : fan[e])
      GNN_CHECK_ARG(f >= -1, "HeteroNeighborSampler: a fan-out is a count of neighbours or -1 (all), got ", f,
                    " for edge type ", edgeTypeName(edgeTypes_[e]));
  }
  return fan;
}

HeteroSampledSubgraph HeteroNeighborSampler::sample(const std::string& inputType, const std::vector<int64_t>& seeds,
                                                    const HeteroNumNeighbors& numNeighbors, uint64_t seed,
                                                    int64_t epoch, bool replace) const {
  const int64_t input = nodeTypeIndex(inputType);
  const std::vector<std::vector<int64_t>> fan = fanouts(numNeighbors);
  const size_t T = nodeTypes_.size(), R = edgeTypes_.size(), L = fan.empty() ? 0 : fan[0].size();
  HeteroSampledSubgraph out;
  out.nodeTypes = nodeTypes_;
  out.edgeTypes = edgeTypes_;
  out.nodes.resize(T);
  out.src.resize(R);
  out.dst.resize(R);
  out.edgeIds.resize(R);
  out.nodesPerHop.resize(T);
  out.edgesPerHop.resize(R);
  out.inputType = input;
  out.numSeeds = static_cast<int64_t>(seeds.size());
  // Local id of every node seen so far, all types in one array at their offsets (-1: none); the entries set are
  // reset before returning, so the array is built once per thread and reused.
  thread_local std::vector<int64_t> local;
  const int64_t total = nodeOffset_.empty() ? 0 : nodeOffset_.back() + numNodes_.back();
  if (static_cast<int64_t>(local.size()) < total) local.assign(static_cast<size_t>(total), -1);
  auto cleanup = [&] {
    for (size_t t = 0; t < T; ++t)
      for (int64_t v : out.nodes[t]) local[static_cast<size_t>(nodeOffset_[t] + v)] = -1;
  };
  const int64_t nInput = numNodes_[static_cast<size_t>(input)], inputOffset = nodeOffset_[static_cast<size_t>(input)];
  std::vector<int64_t>& seedRows = out.nodes[static_cast<size_t>(input)];
  for (int64_t v : seeds) {
    if (v < 0 || v >= nInput || local[static_cast<size_t>(inputOffset + v)] >= 0) {
      cleanup();
      GNN_CHECK_ARG(v >= 0 && v < nInput, "HeteroNeighborSampler: seed ", v, " is outside node type '", inputType,
                    "''s ", nInput, " nodes");
      invalidArgument("HeteroNeighborSampler: seed ", v, " appears twice in one batch");
    }
    local[static_cast<size_t>(inputOffset + v)] = static_cast<int64_t>(seedRows.size());
    seedRows.push_back(v);
  }
  std::vector<int64_t> begin(T, 0), end(T, 0);
  for (size_t t = 0; t < T; ++t) {
    end[t] = static_cast<int64_t>(out.nodes[t].size());
    out.nodesPerHop[t].push_back(end[t]);
  }
  for (size_t hop = 0; hop < L; ++hop) {
    sampleHop(hop, fan, begin, end, seed, epoch, replace, local, out);
    for (size_t t = 0; t < T; ++t) {
      begin[t] = end[t];
      end[t] = static_cast<int64_t>(out.nodes[t].size());
      out.nodesPerHop[t].push_back(end[t] - begin[t]);
    }
  }
  cleanup();
  return out;
}

void HeteroNeighborSampler::sampleHop(size_t hop, const std::vector<std::vector<int64_t>>& fan,
                                      const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                                      uint64_t seed, int64_t epoch, bool replace, std::vector<int64_t>& local,
                                      HeteroSampledSubgraph& out) const {
  std::vector<std::pair<int64_t, int64_t>> moved;
  std::vector<int64_t> picks;
  for (size_t e = 0; e < csc_.size(); ++e) {
    const Csc& c = csc_[e];
    const int64_t fanout = fan[e][hop];
    const size_t s = static_cast<size_t>(c.srcType), d = static_cast<size_t>(c.dstType);
    std::vector<int64_t>& srcRows = out.nodes[s];
    const int64_t edgesBefore = static_cast<int64_t>(out.src[e].size());
    // Rows of the destination type are read by index: when src and dst are one type, appending moves them.
    for (int64_t i = begin[d]; i < end[d]; ++i) {
      const int64_t v = out.nodes[d][static_cast<size_t>(i)];
      const int64_t lo = c.inPtr[static_cast<size_t>(v)], deg = c.inPtr[static_cast<size_t>(v) + 1] - lo;
      if (deg == 0 || fanout == 0) continue;
      picks.clear();
      if (fanout < 0 || (!replace && fanout >= deg)) {
        for (int64_t j = 0; j < deg; ++j) picks.push_back(j);
      } else {
        Generator g = heteroNodeStream(seed, epoch, static_cast<int64_t>(e), v);
        if (replace)
          for (int64_t j = 0; j < fanout; ++j)
            picks.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(deg))));
        else
          detail::drawDistinct(g, deg, fanout, moved, picks);
      }
      for (int64_t j : picks) {
        const int64_t u = c.inSrc[static_cast<size_t>(lo + j)];
        int64_t& lu = local[static_cast<size_t>(nodeOffset_[s] + u)];
        if (lu < 0) {
          lu = static_cast<int64_t>(srcRows.size());
          srcRows.push_back(u);
        }
        out.src[e].push_back(lu);
        out.dst[e].push_back(i);
        out.edgeIds[e].push_back(c.inEdge[static_cast<size_t>(lo + j)]);
      }
    }
    out.edgesPerHop[e].push_back(static_cast<int64_t>(out.src[e].size()) - edgesBefore);
  }
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> HeteroNeighborSampler::worstCase(
    const std::string& inputType, int64_t batchSize, const HeteroNumNeighbors& numNeighbors) const {
  GNN_CHECK_ARG(batchSize >= 0, "HeteroNeighborSampler::worstCase: batchSize = ", batchSize);
  const int64_t input = nodeTypeIndex(inputType);
  const std::vector<std::vector<int64_t>> fan = fanouts(numNeighbors);
  const size_t T = nodeTypes_.size(), L = fan.empty() ? 0 : fan[0].size();
  std::vector<int64_t> nodes(T, 0), edges(csc_.size(), 0), frontier(T, 0);
  nodes[static_cast<size_t>(input)] = frontier[static_cast<size_t>(input)] =
      std::min(batchSize, numNodes_[static_cast<size_t>(input)]);
  // Counts saturate at the types' sizes, so products of fan-outs cannot overflow.
  for (size_t hop = 0; hop < L; ++hop) {
    std::vector<int64_t> next(T, 0);
    for (size_t e = 0; e < csc_.size(); ++e) {
      const Csc& c = csc_[e];
      const int64_t E = numEdges(static_cast<int64_t>(e)), f = fan[e][hop] < 0 ? c.maxInDegree : fan[e][hop];
      const int64_t from = frontier[static_cast<size_t>(c.dstType)];
      const int64_t sampled = f == 0 || from == 0 ? 0 : from > E / f ? E : std::min(E, from * f);
      edges[e] = std::min(E, edges[e] + sampled);
      int64_t& n = next[static_cast<size_t>(c.srcType)];
      n = std::min(numNodes_[static_cast<size_t>(c.srcType)], n + sampled);
    }
    for (size_t t = 0; t < T; ++t) {
      nodes[t] = std::min(numNodes_[t], nodes[t] + next[t]);
      frontier[t] = next[t];
    }
  }
  return {nodes, edges};
}

}  // namespace gnn
