// selfLoopAttr (GraphAttention.h): the edge features PyG's add_self_loops gives the loops it adds, from each
// node's incoming edges (fill_value "mean", "add", "max", "min"), with its backward.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {

namespace {

using ops::checkEdgeIndex;

// selfLoopAttr's grouping: the edges that are not self-loops, grouped by target (edge ids in edge order).
struct EdgeGroups {
  Tensor src, dst;          // int64 [E], checked against the node count
  Tensor dstPtr, dstEdges;  // [N + 1], [kept edges]
};

EdgeGroups groupEdges(const char* op, const Tensor& edgeIndex, int64_t N) {
  checkEdgeIndex(op, edgeIndex);
  const int64_t E = edgeIndex.dim(1);
  const int64_t* p = std::as_const(edgeIndex).data<int64_t>();
  EdgeGroups g{Tensor::empty({E}, DType::I64), Tensor::empty({E}, DType::I64), Tensor({N + 1}, DType::I64), {}};
  int64_t *s = g.src.data<int64_t>(), *d = g.dst.data<int64_t>(), *ptr = g.dstPtr.data<int64_t>();
  for (int64_t e = 0; e < E; ++e) {
    s[e] = p[e];
    d[e] = p[E + e];
    GNN_CHECK_ARG(s[e] >= 0 && s[e] < N && d[e] >= 0 && d[e] < N, op, ": edge ", e, " (", s[e], " -> ", d[e],
                  ") is outside the ", N, " nodes");
    if (s[e] != d[e]) ++ptr[d[e] + 1];
  }
  for (int64_t r = 0; r < N; ++r) ptr[r + 1] += ptr[r];
  g.dstEdges = Tensor::empty({ptr[N]}, DType::I64);
  int64_t* out = g.dstEdges.data<int64_t>();
  std::vector<int64_t> next(ptr, ptr + N);
  for (int64_t e = 0; e < E; ++e)
    if (s[e] != d[e]) out[next[d[e]]++] = e;
  return g;
}

enum class LoopReduce { Mean, Sum, Max, Min };

LoopReduce loopReduceOf(const std::string& r) {
  if (r == "mean") return LoopReduce::Mean;
  if (r == "add" || r == "sum") return LoopReduce::Sum;
  if (r == "max") return LoopReduce::Max;
  if (r == "min") return LoopReduce::Min;
  throw std::invalid_argument("selfLoopAttr: reduce '" + r + "' is not one of mean, add, sum, max, min");
}
// selfLoopAttr's backward: each edge that is not a self-loop gets its target's gradient (divided by the count
// for the mean), or, for max and min, each (node, feature) gives its gradient to its one extreme edge.
// saved: src, dst, the target grouping's ptr, the extreme edges (undefined for mean and add).
template <class T>
Tensor selfLoopAttrGrad(const Tensor& gy, const std::vector<Tensor>& saved, bool mean, int64_t D) {
  const int64_t E = saved[0].numel(), N = gy.dim(0);
  const int64_t *s = saved[0].data<int64_t>(), *t = saved[1].data<int64_t>(), *ptr = saved[2].data<int64_t>();
  const T* g = gy.data<T>();
  Tensor G({E, D}, gy.dtype());  // zeros: self-loop edges get none
  T* o = G.data<T>();
  if (saved[3].defined()) {
    const int64_t* arg = saved[3].data<int64_t>();
    for (int64_t k = 0; k < N * D; ++k)
      if (arg[k] >= 0) o[arg[k] * D + k % D] = g[k];
    return G;
  }
  parallelFor(E, grainFor(D), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t edge = b; edge < e; ++edge) {
      if (s[edge] == t[edge]) continue;
      const T n = static_cast<T>(ptr[t[edge] + 1] - ptr[t[edge]]);
      for (int64_t d = 0; d < D; ++d) o[edge * D + d] = mean ? g[t[edge] * D + d] / n : g[t[edge] * D + d];
    }
  });
  return G;
}
}  // namespace

Variable selfLoopAttr(const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes, const std::string& reduce) {
  const LoopReduce mode = loopReduceOf(reduce);
  const Tensor& A = edgeAttr.value();
  const EdgeGroups groups = groupEdges("selfLoopAttr", edgeIndex, numNodes);
  const int64_t E = groups.src.numel(), N = numNodes;
  GNN_CHECK_ARG(A.rank() == 2 && A.dim(0) == E && A.isFloating(), "selfLoopAttr: edge features ",
                shapeString(A.shape()), " for ", E, " edges");
  const int64_t D = A.dim(1);
  const bool extreme = mode == LoopReduce::Max || mode == LoopReduce::Min;
  return dispatchFloat(A.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({N, D}, A.dtype());
    Tensor Arg = extreme ? Tensor::empty({N, D}, DType::I64) : Tensor();
    const T* a = A.data<T>();
    const int64_t *ptr = groups.dstPtr.data<int64_t>(), *edges = groups.dstEdges.data<int64_t>();
    T* y = Y.data<T>();
    int64_t* arg = extreme ? Arg.data<int64_t>() : nullptr;
    parallelFor(N, rowChunk(N, (E / std::max<int64_t>(N, 1) + 1) * D), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
      for (int64_t i = b; i < e; ++i)
        for (int64_t d = 0; d < D; ++d) {
          T acc = 0;
          int64_t best = -1;
          for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
            const T v = a[edges[k] * D + d];
            if (!extreme) {
              acc += v;
            } else if (best < 0 || (mode == LoopReduce::Max ? v > acc : v < acc)) {
              acc = v;
              best = edges[k];
            }
          }
          if (mode == LoopReduce::Mean && ptr[i + 1] > ptr[i]) acc /= static_cast<T>(ptr[i + 1] - ptr[i]);
          y[i * D + d] = acc;
          if (arg) arg[i * D + d] = best;
        }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"selfLoopAttr", E * D, E * (16 + D * elem), N * D * elem, E * D};
    return Variable::record(info, Y, {edgeAttr}, {groups.src, groups.dst, groups.dstPtr, Arg},
                            [mean = mode == LoopReduce::Mean, D](const Tensor& gy, std::vector<GradInput>& in,
                                                                 const std::vector<Tensor>& saved) {
                              in[0].addGrad(selfLoopAttrGrad<T>(gy, saved, mean, D));
                            });
  });
}

}  // namespace gnn
