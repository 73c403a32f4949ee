#include "loaders/NeighborSampler.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "gnn/system/Check.h"
#include "gnn/system/Random.h"

namespace gnn {

namespace {

// The stream of node v's draws in (seed, epoch): its own generator, so no other node's draws move it.
Generator nodeStream(uint64_t seed, int64_t epoch, int64_t v) {
  const uint64_t k = Generator::mix64(seed * 0x9e3779b97f4a7c15ULL + 0x5851f42d4c957f2dULL) ^
                     Generator::mix64(static_cast<uint64_t>(epoch) * 0xd1b54a32d192ed03ULL + 0x2545f4914f6cdd1dULL);
  return Generator(Generator::mix64(k ^ (static_cast<uint64_t>(v) * 0xbf58476d1ce4e5b9ULL)));
}

}  // namespace

namespace detail {

// The shuffled array is kept as the few entries that moved.
void drawDistinct(Generator& g, int64_t deg, int64_t k, std::vector<std::pair<int64_t, int64_t>>& moved,
                  std::vector<int64_t>& out) {
  moved.clear();
  auto at = [&](int64_t i) {
    for (const auto& [pos, val] : moved)
      if (pos == i) return val;
    return i;
  };
  for (int64_t j = 0; j < k; ++j) {
    const int64_t r = j + static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(deg - j)));
    const int64_t picked = at(r), here = at(j);
    bool found = false;
    for (auto& [pos, val] : moved)
      if (pos == r) {
        val = here;
        found = true;
        break;
      }
    if (!found) moved.emplace_back(r, here);
    out.push_back(picked);
  }
}

}  // namespace detail

Tensor edgeIndexOf(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  GNN_CHECK_ARG(src.size() == dst.size(), "edgeIndexOf: ", src.size(), " sources and ", dst.size(), " targets");
  const int64_t E = static_cast<int64_t>(src.size());
  Tensor ei = Tensor::empty({2, E}, DType::I64);
  std::copy(src.begin(), src.end(), ei.data<int64_t>());
  std::copy(dst.begin(), dst.end(), ei.data<int64_t>() + E);
  return ei;
}

NeighborSampler::NeighborSampler(const Tensor& edgeIndex, int64_t numNodes) : numNodes_(numNodes) {
  GNN_CHECK_ARG(numNodes >= 0, "NeighborSampler: numNodes = ", numNodes);
  GNN_CHECK_ARG(edgeIndex.defined() && edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "NeighborSampler: edgeIndex must be int64 [2, E]");
  const int64_t E = edgeIndex.dim(1);
  GNN_CHECK_ARG(numNodes <= INT32_MAX && E <= INT32_MAX, "NeighborSampler: ", numNodes, " nodes and ", E,
                " edges: ids beyond 32 bits are not supported");
  const int64_t* src = edgeIndex.data<int64_t>();
  const int64_t* dst = src + E;
  inPtr_.assign(static_cast<size_t>(numNodes + 1), 0);
  for (int64_t e = 0; e < E; ++e) {
    GNN_CHECK_ARG(src[e] >= 0 && src[e] < numNodes && dst[e] >= 0 && dst[e] < numNodes, "NeighborSampler: edge ", e,
                  " (", src[e], " -> ", dst[e], ") is outside the graph's ", numNodes, " nodes");
    ++inPtr_[static_cast<size_t>(dst[e]) + 1];
  }
  for (int64_t v = 0; v < numNodes; ++v) {
    maxInDegree_ = std::max(maxInDegree_, inPtr_[static_cast<size_t>(v) + 1]);
    inPtr_[static_cast<size_t>(v) + 1] += inPtr_[static_cast<size_t>(v)];
  }
  inSrc_.resize(static_cast<size_t>(E));
  inEdge_.resize(static_cast<size_t>(E));
  std::vector<int64_t> fill(inPtr_.begin(), inPtr_.end() - 1);
  for (int64_t e = 0; e < E; ++e) {  // stable: a target's edges keep their order
    const int64_t q = fill[static_cast<size_t>(dst[e])]++;
    inSrc_[static_cast<size_t>(q)] = static_cast<int32_t>(src[e]);
    inEdge_[static_cast<size_t>(q)] = static_cast<int32_t>(e);
  }
}

SampledSubgraph NeighborSampler::sample(const std::vector<int64_t>& seeds, const std::vector<int64_t>& numNeighbors,
                                        uint64_t seed, int64_t epoch, bool replace) const {
  for (int64_t f : numNeighbors)
    GNN_CHECK_ARG(f >= -1, "NeighborSampler: a fan-out is a count of neighbours or -1 (all), got ", f);
  SampledSubgraph out;
  out.numSeeds = static_cast<int64_t>(seeds.size());
  // Local id of every node seen so far (-1: none); the entries set are reset before returning, so the array is
  // built once per thread and reused.
  thread_local std::vector<int64_t> local;
  if (static_cast<int64_t>(local.size()) < numNodes_) local.assign(static_cast<size_t>(numNodes_), -1);
  auto cleanup = [&] {
    for (int64_t v : out.nodes) local[static_cast<size_t>(v)] = -1;
  };
  out.nodes.reserve(seeds.size() * 4);
  for (int64_t v : seeds) {
    if (v < 0 || v >= numNodes_ || local[static_cast<size_t>(v)] >= 0) {
      cleanup();
      GNN_CHECK_ARG(v >= 0 && v < numNodes_, "NeighborSampler: seed ", v, " is outside the graph's ", numNodes_,
                    " nodes");
      GNN_CHECK_ARG(false, "NeighborSampler: seed ", v, " appears twice in one batch");
    }
    local[static_cast<size_t>(v)] = static_cast<int64_t>(out.nodes.size());
    out.nodes.push_back(v);
  }
  out.nodesPerHop.push_back(out.numSeeds);
  std::vector<std::pair<int64_t, int64_t>> moved;
  std::vector<int64_t> picks;
  int64_t begin = 0;
  for (int64_t fanout : numNeighbors) {
    const int64_t end = static_cast<int64_t>(out.nodes.size()), edgesBefore = static_cast<int64_t>(out.src.size());
    for (int64_t t = begin; t < end; ++t) {
      const int64_t v = out.nodes[static_cast<size_t>(t)];
      const int64_t lo = inPtr_[static_cast<size_t>(v)], deg = inPtr_[static_cast<size_t>(v) + 1] - lo;
      if (deg == 0 || fanout == 0) continue;
      picks.clear();
      if (fanout < 0 || (!replace && fanout >= deg)) {
        for (int64_t j = 0; j < deg; ++j) picks.push_back(j);
      } else {
        Generator g = nodeStream(seed, epoch, v);
        if (replace)
          for (int64_t j = 0; j < fanout; ++j) picks.push_back(static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(deg))));
        else
          detail::drawDistinct(g, deg, fanout, moved, picks);
      }
      for (int64_t j : picks) {
        const int64_t u = inSrc_[static_cast<size_t>(lo + j)];
        int64_t& lu = local[static_cast<size_t>(u)];
        if (lu < 0) {
          lu = static_cast<int64_t>(out.nodes.size());
          out.nodes.push_back(u);
        }
        out.src.push_back(lu);
        out.dst.push_back(t);
        out.edgeIds.push_back(inEdge_[static_cast<size_t>(lo + j)]);
      }
    }
    out.nodesPerHop.push_back(static_cast<int64_t>(out.nodes.size()) - end);
    out.edgesPerHop.push_back(static_cast<int64_t>(out.src.size()) - edgesBefore);
    begin = end;
  }
  cleanup();
  return out;
}

void NeighborSampler::incomingEdges(int64_t begin, int64_t end, std::vector<int64_t>& src,
                                    std::vector<int64_t>& dstFromBegin) const {
  GNN_CHECK_ARG(0 <= begin && begin <= end && end <= numNodes_, "NeighborSampler: targets [", begin, ", ", end,
                ") of ", numNodes_, " nodes");
  src.clear();
  dstFromBegin.clear();
  for (int64_t v = begin; v < end; ++v)
    for (int64_t q = inPtr_[static_cast<size_t>(v)]; q < inPtr_[static_cast<size_t>(v) + 1]; ++q) {
      src.push_back(inSrc_[static_cast<size_t>(q)]);
      dstFromBegin.push_back(v - begin);
    }
}

std::pair<int64_t, int64_t> NeighborSampler::worstCase(int64_t batchSize,
                                                       const std::vector<int64_t>& numNeighbors) const {
  // Counts saturate at the graph's size, so products of fan-outs cannot overflow.
  int64_t nodes = std::min(batchSize, numNodes_), edges = 0, frontier = nodes;
  for (int64_t f : numNeighbors) {
    const int64_t fan = f < 0 ? maxInDegree_ : f;
    const int64_t sampled = fan == 0 || frontier == 0 ? 0
                            : frontier > numEdges() / fan ? numEdges()
                                                           : std::min(numEdges(), frontier * fan);
    edges = std::min(numEdges(), edges + sampled);
    frontier = std::min(numNodes_, sampled);
    nodes = std::min(numNodes_, nodes + frontier);
  }
  return {nodes, edges};
}

}  // namespace gnn
