// The shared part of the graph attention ops that is not a template (GraphAttentionKernels.h): the groupings'
// build and cache, the dropout masks, argument checks.
#include "gnn/ops/GraphAttentionKernels.h"

#include <deque>
#include <mutex>

#include "gnn/system/ExecutionContext.h"

namespace gnn::graph_attention {

using ops::checkEdgeIndex;

namespace {

GraphPtr buildGraph(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
  auto g = std::make_shared<AttentionGraph>();
  const int64_t E = edgeIndex.dim(1);
  const int64_t* s = std::as_const(edgeIndex).data<int64_t>();
  const int64_t* d = s + E;
  for (int64_t e = 0; e < E; ++e)
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < N && d[e] >= 0 && d[e] < N, op, ": edge ", e, " (", s[e], " -> ", d[e],
                  ") is outside the ", N, " nodes");
  g->N = N;
  g->E = E;
  g->selfLoops = selfLoops;
  auto kept = [&](int64_t e) { return !(selfLoops && s[e] == d[e]); };
  const int64_t self = selfLoops ? 1 : 0;
  g->dstPtr.assign(N + 1, 0);
  g->srcPtr.assign(N + 1, 0);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) ++g->dstPtr[d[e] + 1], ++g->srcPtr[s[e] + 1];
  for (int64_t i = 0; i < N; ++i) {
    g->dstPtr[i + 1] += g->dstPtr[i] + self;
    g->srcPtr[i + 1] += g->srcPtr[i] + self;
  }
  const int64_t T = g->dstPtr[N];
  g->terms = T;
  g->termSrc.resize(T);
  g->termEdge.resize(T);
  g->outTerm.resize(T);
  g->outDst.resize(T);
  g->outPos.resize(T);
  std::vector<int64_t> next(g->dstPtr.begin(), g->dstPtr.end() - 1), pos(E, -1);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) {
      const int64_t k = next[d[e]]++;
      g->termSrc[k] = s[e];
      g->termEdge[k] = e;
      pos[e] = k;
    }
  std::vector<int64_t> nextOut(g->srcPtr.begin(), g->srcPtr.end() - 1);
  for (int64_t e = 0; e < E; ++e)
    if (kept(e)) {
      const int64_t q = nextOut[s[e]]++;
      g->outTerm[q] = pos[e];
      g->outPos[pos[e]] = q;
      g->outDst[q] = d[e];
    }
  if (selfLoops)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t k = g->dstPtr[i + 1] - 1, q = g->srcPtr[i + 1] - 1;
      g->termSrc[k] = i;
      g->termEdge[k] = -1;
      g->outTerm[q] = k;
      g->outPos[k] = q;
      g->outDst[q] = i;
    }
  return g;
}

// The last few graphs' groupings (a training loop calls the attention with one edge_index many times). An
// entry holds its edge_index, so no other buffer can take its storage's identity; the version says whether it
// was written since.
class GraphCache {
 public:
  GraphPtr get(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
    checkEdgeIndex(op, edgeIndex);
    const uint64_t version =
        edgeIndex.version();  // read before the build: a racing write makes the next rebuild
    const void* data = std::as_const(edgeIndex).raw();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Entry& e : entries_)
        if (e.edgeIndex.storageId() == edgeIndex.storageId() && e.data == data && e.version == version &&
            e.edgeIndex.shape() == edgeIndex.shape() && e.N == N && e.selfLoops == selfLoops)
          return e.graph;
    }
    GraphPtr g = buildGraph(op, edgeIndex, N, selfLoops);
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_front({edgeIndex, data, version, N, selfLoops, g});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return g;
  }

 private:
  static constexpr size_t kCapacity = 4;
  struct Entry {
    Tensor edgeIndex;
    const void* data;
    uint64_t version;
    int64_t N;
    bool selfLoops;
    GraphPtr graph;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;
};

}  // namespace

GraphPtr attentionGraph(const char* op, const Tensor& edgeIndex, int64_t N, bool selfLoops) {
  static GraphCache cache;
  return cache.get(op, edgeIndex, N, selfLoops);
}
// The dropout masks of the attention in training (else undefined): the edges' [E, H] and the self terms' [N,
// H], each its own stream, so that a real edge's or node's draw does not move when padding adds edges and
// nodes after the real ones.
std::pair<Tensor, Tensor> attentionMasks(const GraphAttentionOptions& o, int64_t E, int64_t N, int64_t H,
                                         DType dtype) {
  GNN_CHECK_ARG(o.dropout >= 0 && o.dropout < 1, "graph attention: dropout must be in [0, 1), got ",
                o.dropout);
  if (!o.training || o.dropout == 0) return {};
  Generator edges = ExecutionContext::current().nextRandomStream();
  Generator self = ExecutionContext::current().nextRandomStream();
  return {dropoutMask({E, H}, dtype, o.dropout, edges),
          o.selfLoops ? dropoutMask({N, H}, dtype, o.dropout, self) : Tensor()};
}
void checkFloat2(const char* op, const char* what, const Tensor& t, int64_t rows, int64_t cols, DType dtype) {
  GNN_CHECK_ARG(t.rank() == 2 && t.dim(0) == rows && t.dim(1) == cols && t.dtype() == dtype, op, ": ", what,
                " is ", dtypeName(t.dtype()), " ", shapeString(t.shape()), ", expected ", dtypeName(dtype),
                " [", rows, ", ", cols, "]");
}
// Heads and channels of an attention vector [H, C] or [1, H, C].
std::pair<int64_t, int64_t> headsOf(const char* op, const Tensor& att) {
  GNN_CHECK_ARG((att.rank() == 2) || (att.rank() == 3 && att.dim(0) == 1), op,
                ": the attention vector must be [heads, C] or [1, heads, C], got ", shapeString(att.shape()));
  return {att.dim(att.rank() - 2), att.dim(att.rank() - 1)};
}
// The inputs of an attention op (the optional ones only when defined) and where the optional ones sit.
std::vector<Variable> attentionInputs(const std::vector<Variable>& required, const Variable& edge,
                                      const Variable& loop, int* edgeAt, int* loopAt) {
  std::vector<Variable> inputs = required;
  *edgeAt = *loopAt = -1;
  if (edge.defined()) {
    *edgeAt = static_cast<int>(inputs.size());
    inputs.push_back(edge);
  }
  if (loop.defined()) {
    *loopAt = static_cast<int>(inputs.size());
    inputs.push_back(loop);
  }
  return inputs;
}

}  // namespace gnn::graph_attention
