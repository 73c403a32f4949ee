// Distances between positions: per edge (SchNet's interatomic distances, Schuett et al. 2017) and all pairs
// within each batch entry. Both recompute the differences in the backward instead of keeping an [E, D] or
// [B, N, N, D] intermediate, and give a zero distance the gradient 0 (the norm has no derivative there; 0 is
// its smallest subgradient, and what keeps a self-loop or a padded duplicate atom from producing NaN).
#include <algorithm>
#include <cmath>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Parallel.h"

namespace gnn {

Variable edgeDistances(const Variable& pos, const Tensor& edgeIndex) {
  const Tensor& P = pos.value();
  GNN_CHECK_ARG(P.rank() == 2 && P.isFloating(), "edgeDistances: pos must be a float [N, D], got ",
                dtypeName(P.dtype()), " ", shapeString(P.shape()));
  GNN_CHECK_ARG(edgeIndex.rank() == 2 && edgeIndex.dim(0) == 2 && edgeIndex.dtype() == DType::I64,
                "edgeDistances: edge_index must be int64 [2, E], got ", dtypeName(edgeIndex.dtype()), " ",
                shapeString(edgeIndex.shape()), " (for pos ", shapeString(P.shape()), ")");
  const int64_t N = P.dim(0), D = P.dim(1), E = edgeIndex.dim(1);
  const int64_t* ei = edgeIndex.data<int64_t>();
  for (int64_t k = 0; k < 2 * E; ++k)
    GNN_CHECK_ARG(ei[k] >= 0 && ei[k] < N, "edgeDistances: ", k < E ? "source" : "target", " ", ei[k], " of edge ",
                  k % E, " is outside [0, ", N, ") for pos ", shapeString(P.shape()));
  return dispatchFloat(P.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({E}, P.dtype());
    const T* p = P.data<T>();
    T* y = Y.data<T>();
    parallelFor(E, grainFor(3 * D + 1), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const T *ps = p + ei[k] * D, *pt = p + ei[E + k] * D;
        T s = T(0);
        for (int64_t d = 0; d < D; ++d) s += (pt[d] - ps[d]) * (pt[d] - ps[d]);
        y[k] = std::sqrt(s);
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    // FLOPs per edge: forward 3 per coordinate and a square root; backward, at each end, a division and 3 per
    // coordinate.
    OpInfo info{"edgeDistances", E * (3 * D + 1), E * (16 + 2 * D * elem), E * elem, E * (6 * D + 2)};
    return Variable::record(info, Y, {pos}, {P, edgeIndex, Y}, [N, D, E](const Tensor& gy, std::vector<GradInput>& in,
                                                                       const std::vector<Tensor>& saved) {
      const T* p = saved[0].data<T>();
      const int64_t* ei = saved[1].data<int64_t>();
      const T* dist = saved[2].data<T>();
      const T* g = gy.data<T>();
      // d|pt - ps| = (pt - ps) / |pt - ps|: + at the target, - at the source. Each node's endpoints in order
      // (all as source, then all as target, each by edge), grouped by a stable counting sort.
      std::vector<int64_t> ptr(static_cast<size_t>(N) + 1, 0), ends(static_cast<size_t>(2 * E));
      for (int64_t k = 0; k < 2 * E; ++k) ++ptr[ei[k] + 1];
      for (int64_t v = 0; v < N; ++v) ptr[v + 1] += ptr[v];
      std::vector<int64_t> fill(ptr.begin(), ptr.end() - 1);
      for (int64_t k = 0; k < 2 * E; ++k) ends[fill[ei[k]]++] = k;
      Tensor G = Tensor::empty({N, D}, gy.dtype());
      T* o = G.data<T>();
      parallelFor(N, grainFor(std::max<int64_t>(1, 2 * E / std::max<int64_t>(N, 1)) * 3 * D), [&](int64_t b, int64_t e) {
        for (int64_t v = b; v < e; ++v) {
          T* __restrict ov = o + v * D;
          std::fill(ov, ov + D, T(0));
          for (int64_t k = ptr[v]; k < ptr[v + 1]; ++k) {
            const int64_t end = ends[k], edge = end % E;
            if (dist[edge] == T(0)) continue;  // zero length: gradient 0
            const T w = (end < E ? -g[edge] : g[edge]) / dist[edge];
            const T *ps = p + ei[edge] * D, *pt = p + ei[E + edge] * D;
            for (int64_t d = 0; d < D; ++d) ov[d] += w * (pt[d] - ps[d]);
          }
        }
      });
      in[0].addGrad(G);
    });
  });
}

Variable pairwiseDistances(const Variable& pos) {
  const Tensor& P = pos.value();
  GNN_CHECK_ARG((P.rank() == 2 || P.rank() == 3) && P.isFloating(),
                "pairwiseDistances: pos must be a float [B, N, D] or [N, D], got ", dtypeName(P.dtype()), " ",
                shapeString(P.shape()));
  const int64_t B = P.rank() == 3 ? P.dim(0) : 1, N = P.dim(-2), D = P.dim(-1);
  Shape outShape = P.rank() == 3 ? Shape{B, N, N} : Shape{N, N};
  return dispatchFloat(P.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(outShape, P.dtype());
    const T* p = P.data<T>();
    T* y = Y.data<T>();
    // One row (b, i) per item. d(i, j) and d(j, i) are computed alike ((a - b)^2 = (b - a)^2 exactly), so the
    // output is exactly symmetric, with an exact 0 diagonal.
    parallelFor(B * N, grainFor(N * (3 * D + 1)), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const T* pb = p + (row / N) * N * D;
        const T* pi = p + row * D;
        T* yr = y + row * N;
        for (int64_t j = 0; j < N; ++j) {
          const T* pj = pb + j * D;
          T s = T(0);
          for (int64_t d = 0; d < D; ++d) s += (pi[d] - pj[d]) * (pi[d] - pj[d]);
          yr[j] = std::sqrt(s);
        }
      }
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T)), pairs = B * N * N;
    OpInfo info{"pairwiseDistances", pairs * (3 * D + 1), static_cast<int64_t>(P.nbytes()), pairs * elem,
                pairs * (3 * D + 2)};
    return Variable::record(info, Y, {pos}, {P, Y}, [N, D](const Tensor& gy, std::vector<GradInput>& in,
                                                         const std::vector<Tensor>& saved) {
      const T* p = saved[0].data<T>();
      const T* dist = saved[1].data<T>();
      const T* g = gy.data<T>();
      const int64_t rows = saved[0].numel() / std::max<int64_t>(D, 1);
      // g_pos[i] = sum_j (gy[i, j] + gy[j, i]) (p_i - p_j) / d_ij, in increasing j, per row (b, i).
      Tensor G = Tensor::empty(in[0].shape(), gy.dtype());
      T* o = G.data<T>();
      parallelFor(rows, grainFor(N * (3 * D + 2)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const int64_t batch = row / N, i = row % N;
          const T* pb = p + batch * N * D;
          const T* gb = g + batch * N * N;
          const T* db = dist + batch * N * N;
          const T* pi = pb + i * D;
          T* __restrict oi = o + row * D;
          std::fill(oi, oi + D, T(0));
          for (int64_t j = 0; j < N; ++j) {
            if (db[i * N + j] == T(0)) continue;  // the diagonal, or coinciding points: gradient 0
            const T w = (gb[i * N + j] + gb[j * N + i]) / db[i * N + j];
            const T* pj = pb + j * D;
            for (int64_t d = 0; d < D; ++d) oi[d] += w * (pi[d] - pj[d]);
          }
        }
      });
      in[0].addGrad(G);
    });
  });
}

Variable gaussianSmearing(const Variable& dist, const std::vector<double>& offsets, double coeff) {
  const Tensor& D = dist.value();
  GNN_CHECK_ARG(D.rank() == 1 && D.isFloating(), "gaussianSmearing: distances must be a float [E], got ",
                dtypeName(D.dtype()), " ", shapeString(D.shape()));
  GNN_CHECK_ARG(!offsets.empty() && std::isfinite(coeff), "gaussianSmearing: needs at least one offset and a finite "
                "coefficient, got ", offsets.size(), " offsets and ", coeff);
  const int64_t E = D.numel(), K = static_cast<int64_t>(offsets.size());
  return dispatchFloat(D.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({E, K}, D.dtype());
    const T* d = D.data<T>();
    T* y = Y.data<T>();
    std::vector<T> mu(offsets.begin(), offsets.end());
    const T c = static_cast<T>(coeff);
    // (d - mu) into the output, then the exponential over whole rows in place on Eigen's vectors (the C
    // library's exp per element took most of the op, and far offsets go through its underflow path).
    parallelFor(E, grainFor(4 * K), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T* __restrict yi = y + i * K;
        for (int64_t k = 0; k < K; ++k) yi[k] = d[i] - mu[k];
      }
      ops::vectorBlocks((e - b) * K, [c](auto t) { return (c * t.square()).exp(); }, y + b * K, y + b * K);
    });
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"gaussianSmearing", 4 * E * K, E * elem, E * K * elem, dist.requiresGrad() ? 5 * E * K : 0};
    // The backward recomputes (d - mu) from the distances and reuses the output: d/dd exp(c t^2) = 2 c t out.
    return Variable::record(info, Y, {dist}, {D, Y}, [mu, c](const Tensor& gy, std::vector<GradInput>& in,
                                                             const std::vector<Tensor>& saved) {
      const T* d = saved[0].data<T>();
      const T* y = saved[1].data<T>();
      const T* g = gy.data<T>();
      const int64_t E = saved[0].numel(), K = static_cast<int64_t>(mu.size());
      Tensor G = Tensor::empty({E}, gy.dtype());
      T* o = G.data<T>();
      parallelFor(E, grainFor(5 * K), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          T s = T(0);
          for (int64_t k = 0; k < K; ++k) s += g[i * K + k] * y[i * K + k] * (d[i] - mu[k]);
          o[i] = 2 * c * s;
        }
      });
      in[0].addGrad(G);
    });
  });
}

Variable cosineCutoff(const Variable& dist, double cutoff) {
  const Tensor& D = dist.value();
  GNN_CHECK_ARG(D.isFloating(), "cosineCutoff: distances must be float, got ", dtypeName(D.dtype()));
  GNN_CHECK_ARG(cutoff > 0 && std::isfinite(cutoff), "cosineCutoff: cutoff must be finite and > 0, got ", cutoff);
  return dispatchFloat(D.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty(D.shape(), D.dtype());
    const T* d = D.data<T>();
    T* y = Y.data<T>();
    const T c = static_cast<T>(cutoff), w = static_cast<T>(M_PI / cutoff);
    const int64_t n = D.numel();
    parallelFor(n, grainFor(8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = d[i] < c ? T(0.5) * (std::cos(w * d[i]) + T(1)) : T(0);
    });
    const int64_t bytes = static_cast<int64_t>(D.nbytes());
    OpInfo info{"cosineCutoff", 4 * n, bytes, bytes, dist.requiresGrad() ? 4 * n : 0};
    return Variable::record(info, Y, {dist}, {D}, [c, w](const Tensor& gy, std::vector<GradInput>& in,
                                                         const std::vector<Tensor>& saved) {
      const T* d = saved[0].data<T>();
      const T* g = gy.data<T>();
      Tensor G = Tensor::empty(saved[0].shape(), gy.dtype());
      T* o = G.data<T>();
      const int64_t n = G.numel();
      parallelFor(n, grainFor(8), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = d[i] < c ? g[i] * T(-0.5) * w * std::sin(w * d[i]) : T(0);
      });
      in[0].addGrad(G);
    });
  });
}

}  // namespace gnn
