// Ops of graph transformers: the dense per-graph layout attention runs on (toDenseBatch) and the pieces of
// Graphormer's attention bias (graphAttentionBias, multiHopEdgeBias). Graphormer: Ying et al., "Do
// Transformers Really Perform Bad for Graph Representation?", NeurIPS 2021, and its code (graphormer/modules/
// graphormer_layers.py), whose semantics these follow.
#include <algorithm>
#include <atomic>
#include <vector>

#include "gnn/ops/OpLoops.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/CpuClones.h"
#include "gnn/system/Parallel.h"

namespace gnn {
namespace {

// Graphormer's path length divisor: the hop distance clamped to [1, K] (padding -1 and the diagonal's 0 give
// 1, the unreachable 510 gives K).
inline int64_t hopDivisor(int64_t distance, int64_t K) {
  return std::clamp<int64_t>(distance, 1, K);
}

}  // namespace

Variable toDenseBatch(const Variable& x, const Tensor& ptr, const Tensor& graphsMask, int64_t maxNodes,
                      const Variable& leading) {
  const Tensor& X = x.value();
  GNN_CHECK_ARG(X.rank() == 2 && X.isFloating(), "toDenseBatch: x must be a float [N, D], got ",
                dtypeName(X.dtype()), " ", shapeString(X.shape()));
  GNN_CHECK_ARG(ptr.rank() == 1 && ptr.dtype() == DType::I64 && ptr.numel() >= 1,
                "toDenseBatch: ptr must be int64 [G + 1], got ", dtypeName(ptr.dtype()), " ",
                shapeString(ptr.shape()));
  const int64_t N = X.dim(0), D = X.dim(1), G = ptr.numel() - 1;
  GNN_CHECK_ARG(maxNodes >= 0, "toDenseBatch: maxNodes must be >= 0, got ", maxNodes);
  const bool hasMask = graphsMask.defined(), hasLead = leading.defined();
  if (hasMask)
    GNN_CHECK_ARG(graphsMask.dtype() == DType::U8 && graphsMask.numel() == G,
                  "toDenseBatch: graphsMask must be uint8 [", G, "], got ", dtypeName(graphsMask.dtype()),
                  " ", shapeString(graphsMask.shape()));
  if (hasLead)
    GNN_CHECK_ARG(leading.dtype() == X.dtype() && leading.value().numel() == D,
                  "toDenseBatch: leading must be ", dtypeName(X.dtype()), " with ", D, " elements, got ",
                  dtypeName(leading.dtype()), " ", shapeString(leading.shape()));
  // Node counts per block: a graph's nodes, none for padding graphs.
  const int64_t* p = ptr.data<int64_t>();
  const uint8_t* gm = hasMask ? graphsMask.data<uint8_t>() : nullptr;
  GNN_CHECK_ARG(p[0] == 0 && p[G] == N, "toDenseBatch: ptr must run from 0 to the ", N, " rows of x, got ",
                p[0], " .. ", p[G]);
  std::vector<int64_t> counts(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    const int64_t n = p[g + 1] - p[g];
    GNN_CHECK_ARG(n >= 0, "toDenseBatch: ptr decreases at graph ", g);
    counts[g] = gm && !gm[g] ? 0 : n;
    GNN_CHECK_ARG(counts[g] <= maxNodes, "toDenseBatch: graph ", g, " has ", n,
                  " nodes, more than maxNodes = ", maxNodes,
                  " (raise the batch's maxNodesPerGraph / the model's maxNodes, or leave such graphs out)");
  }
  const int64_t L = hasLead ? 1 : 0, R = L + maxNodes;
  return dispatchFloat(X.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({G, R, D}, X.dtype());
    const T* xp = X.data<T>();
    const T* lp = hasLead ? leading.value().data<T>() : nullptr;
    T* yp = Y.data<T>();
    parallelFor(G, grainFor(R * D), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        T* block = yp + g * R * D;
        if (lp) std::copy(lp, lp + D, block);
        std::copy(xp + p[g] * D, xp + (p[g] + counts[g]) * D, block + L * D);
        std::fill(block + (L + counts[g]) * D, block + R * D, T(0));
      }
    });
    std::vector<Variable> inputs{x};
    if (hasLead) inputs.push_back(leading);
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"toDenseBatch", 0, static_cast<int64_t>(X.nbytes()) + 8 * (G + 1), bytes,
                hasLead ? G * D : 0};
    return Variable::record(info, Y, std::move(inputs), {ptr},
                            [counts, N, D, G, R, L](const Tensor& gy, std::vector<GradInput>& in,
                                                    const std::vector<Tensor>& saved) {
                              const int64_t* p = saved[0].data<int64_t>();
                              const T* g = gy.data<T>();
                              if (in[0].requiresGrad()) {
                                Tensor GX = Tensor::empty({N, D}, gy.dtype());
                                T* gx = GX.data<T>();
                                parallelFor(G, grainFor(R * D), [&](int64_t b, int64_t e) {
                                  for (int64_t k = b; k < e; ++k) {
                                    const T* block = g + (k * R + L) * D;
                                    std::copy(block, block + counts[k] * D, gx + p[k] * D);
                                    std::fill(gx + (p[k] + counts[k]) * D, gx + p[k + 1] * D,
                                              T(0));  // nodes of padding graphs
                                  }
                                });
                                in[0].addGrad(GX);
                              }
                              if (in.size() > 1 && in[1].requiresGrad()) {
                                // The leading row's gradient: its copies' gradients summed in graph order,
                                // per column range.
                                Tensor GL = Tensor::empty(in[1].shape(), gy.dtype());
                                T* gl = GL.data<T>();
                                parallelFor(D, grainFor(G, 16), [&](int64_t b, int64_t e) {
                                  std::fill(gl + b, gl + e, T(0));
                                  for (int64_t k = 0; k < G; ++k)
                                    for (int64_t c = b; c < e; ++c) gl[c] += g[k * R * D + c];
                                });
                                in[1].addGrad(GL);
                              }
                            });
  });
}

Variable graphAttentionBias(const Variable& pairBias, const Variable& tokenBias) {
  const Tensor &Pb = pairBias.value(), &Tb = tokenBias.value();
  GNN_CHECK_ARG(Pb.rank() == 4 && Pb.dim(1) == Pb.dim(2) && Pb.isFloating(),
                "graphAttentionBias: pairBias must be a float [G, M, M, H], got ", dtypeName(Pb.dtype()), " ",
                shapeString(Pb.shape()));
  const int64_t G = Pb.dim(0), M = Pb.dim(1), H = Pb.dim(3), T1 = M + 1;
  GNN_CHECK_ARG(Tb.dtype() == Pb.dtype() && Tb.numel() == H, "graphAttentionBias: tokenBias must be ",
                dtypeName(Pb.dtype()), " with ", H, " elements (one per head), got ", dtypeName(Tb.dtype()),
                " ", shapeString(Tb.shape()));
  return dispatchFloat(Pb.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    Tensor Y = Tensor::empty({G, H, T1, T1}, Pb.dtype());
    const T* pb = Pb.data<T>();
    const T* tb = Tb.data<T>();
    T* yp = Y.data<T>();
    parallelFor(G * H, grainFor(T1 * T1), [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t g = item / H, h = item % H;
        T* out = yp + item * T1 * T1;
        std::fill(out, out + T1, tb[h]);
        for (int64_t i = 0; i < M; ++i) {
          T* row = out + (i + 1) * T1;
          row[0] = tb[h];
          const T* src = pb + ((g * M + i) * M) * H + h;
          for (int64_t j = 0; j < M; ++j) row[j + 1] = src[j * H];
        }
      }
    });
    const int64_t bytes = static_cast<int64_t>(Y.nbytes());
    OpInfo info{"graphAttentionBias", 0, static_cast<int64_t>(Pb.nbytes() + Tb.nbytes()), bytes,
                G * H * 2 * T1};
    return Variable::record(
        info, Y, {pairBias, tokenBias}, {},
        [G, M, H, T1](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>&) {
          const T* g = gy.data<T>();
          if (in[0].requiresGrad()) {
            Tensor GP = Tensor::empty({G, M, M, H}, gy.dtype());
            T* gp = GP.data<T>();
            parallelFor(G, grainFor(M * M * H), [&](int64_t b, int64_t e) {
              for (int64_t k = b; k < e; ++k)
                for (int64_t h = 0; h < H; ++h) {
                  const T* block = g + (k * H + h) * T1 * T1;
                  for (int64_t i = 0; i < M; ++i)
                    for (int64_t j = 0; j < M; ++j)
                      gp[((k * M + i) * M + j) * H + h] = block[(i + 1) * T1 + j + 1];
                }
            });
            in[0].addGrad(GP);
          }
          if (in[1].requiresGrad()) {
            // Each head sums its token row and column over the graphs, in graph order (a few thousand
            // values).
            Tensor GT = Tensor::empty(in[1].shape(), gy.dtype());
            T* gt = GT.data<T>();
            for (int64_t h = 0; h < H; ++h) {
              T acc = 0;
              for (int64_t k = 0; k < G; ++k) {
                const T* block = g + (k * H + h) * T1 * T1;
                for (int64_t j = 0; j < T1; ++j) acc += block[j];
                for (int64_t i = 1; i < T1; ++i) acc += block[i * T1];
              }
              gt[h] = acc;
            }
            in[1].addGrad(GT);
          }
        });
  });
}

namespace {

// The sizes of a multiHopEdgeBias: P pairs, the first K of the Kin hops of edgeInput [P, Kin, Fe] (Fe
// features per hop), a table of V rows of H heads.
struct HopShape {
  int64_t P, K, Kin, Fe, V, H;
};

// ew [K, V, H] = the products E W_k of the table E [V, H] (ep) with each hop's weights W_k [H, H] (wp).
template <class T>
void hopProducts(const T* ep, const T* wp, int64_t K, int64_t V, int64_t H, T* ew) {
  parallelFor(K * V, grainFor(H * H), [&](int64_t b, int64_t e) {
    for (int64_t kv = b; kv < e; ++kv) {
      const int64_t k = kv / V, v = kv % V;
      const T* er = ep + v * H;
      const T* wk = wp + k * H * H;
      T* out = ew + kv * H;
      std::fill(out, out + H, T(0));
      for (int64_t i = 0; i < H; ++i)
        for (int64_t c = 0; c < H; ++c) out[c] += er[i] * wk[i * H + c];
    }
  });
}

// Each pair's bias (yp [P, H]): its hops' rows of ew [K, V, H] summed, over Fe x the hop divisor. Returns
// whether an edgeInput value other than -1 outside [0, V) was seen (and skipped).
template <class T>
bool sumHopRows(const T* ew, const int64_t* ei, const int64_t* sp, const HopShape& shape, T* yp) {
  const int64_t P = shape.P, K = shape.K, Kin = shape.Kin, Fe = shape.Fe, V = shape.V, H = shape.H;
  std::atomic<bool> bad{false};
  parallelFor(P, grainFor(K * Fe * H), [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    for (int64_t pair = b; pair < e; ++pair) {
      T* __restrict out = yp + pair * H;
      std::fill(out, out + H, T(0));
      for (int64_t k = 0; k < K; ++k) {
        const int64_t* hop = ei + (pair * Kin + k) * Fe;
        for (int64_t f = 0; f < Fe; ++f) {
          const int64_t v = hop[f];
          if (v < 0 || v >= V) {  // -1: no feature; anything else outside [0, V): reported below
            if (v != -1) bad.store(true, std::memory_order_relaxed);
            continue;
          }
          const T* __restrict row = ew + (k * V + v) * H;
          for (int64_t c = 0; c < H; ++c) out[c] += row[c];
        }
      }
      const T div = static_cast<T>(Fe) * static_cast<T>(hopDivisor(sp[pair], K));
      for (int64_t c = 0; c < H; ++c) out[c] /= div;
    }
  });
  return bad.load();
}

// S [K, V, H] = sum over the pairs' hops k with a feature v of u = dy / (Fe x divisor): the gradient of
// the products E W_k. Fixed chunks of pairs (at most 8, from the shapes) each fill their own S, summed in
// chunk order: the same bits for any thread count.
template <class T>
Tensor hopRowGradients(const Tensor& gy, const int64_t* ei, const int64_t* sp, const HopShape& shape) {
  const int64_t P = shape.P, K = shape.K, Kin = shape.Kin, Fe = shape.Fe, V = shape.V, H = shape.H;
  const T* g = gy.data<T>();
  const int64_t chunk = std::max(grainFor(K * Fe * H), (P + 7) / 8);
  const int64_t chunks = std::max<int64_t>(1, (P + chunk - 1) / chunk);
  const int64_t width = K * V * H;
  Tensor partial = Tensor::zeros({chunks, width}, gy.dtype());
  T* part = partial.data<T>();
  parallelFor(P, chunk, [&](int64_t b, int64_t e) GNN_CPU_CLONES {
    T* s = part + (b / chunk) * width;
    std::vector<T> u(static_cast<size_t>(H));
    for (int64_t pair = b; pair < e; ++pair) {
      const T div = static_cast<T>(Fe) * static_cast<T>(hopDivisor(sp[pair], K));
      bool any = false;
      for (int64_t c = 0; c < H; ++c) {
        u[c] = g[pair * H + c] / div;
        any = any || u[c] != T(0);
      }
      if (!any) continue;  // masked pairs: nothing flows back
      for (int64_t k = 0; k < K; ++k) {
        const int64_t* hop = ei + (pair * Kin + k) * Fe;
        for (int64_t f = 0; f < Fe; ++f) {
          if (hop[f] < 0) continue;
          T* __restrict sr = s + (k * V + hop[f]) * H;
          for (int64_t c = 0; c < H; ++c) sr[c] += u[c];
        }
      }
    }
  });
  Tensor S = Tensor::empty({K, V, H}, gy.dtype());
  ops::sumChunkPartials(part, chunks, width, S.data<T>());
  return S;
}

// The table's gradient gt [V, H]: d table[v] = sum_k S[k, v] W_k^T (sv the [K, V, H] S, wp the [K, H, H] W).
template <class T>
void tableGradient(const T* sv, const T* wp, int64_t K, int64_t V, int64_t H, T* gt) {
  parallelFor(V, grainFor(K * H * H), [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      T* out = gt + v * H;
      for (int64_t i = 0; i < H; ++i) {
        T acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          const T* sr = sv + (k * V + v) * H;
          const T* wr = wp + (k * H + i) * H;
          for (int64_t c = 0; c < H; ++c) acc += wr[c] * sr[c];
        }
        out[i] = acc;
      }
    }
  });
}

// The hop weights' gradient gw [K, H, H] (zeros on entry): d W_k = sum_v table[v]^T S[k, v], in increasing v.
template <class T>
void hopWeightGradient(const T* ep, const T* sv, int64_t K, int64_t V, int64_t H, T* gw) {
  parallelFor(K, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      T* gwk = gw + k * H * H;
      for (int64_t v = 0; v < V; ++v) {
        const T* er = ep + v * H;
        const T* sr = sv + (k * V + v) * H;
        for (int64_t i = 0; i < H; ++i)
          for (int64_t c = 0; c < H; ++c) gwk[i * H + c] += er[i] * sr[c];
      }
    }
  });
}

}  // namespace

Variable multiHopEdgeBias(const Variable& table, const Variable& hopWeights, const Tensor& edgeInput,
                          const Tensor& spatialPos) {
  const Tensor &E = table.value(), &W = hopWeights.value();
  GNN_CHECK_ARG(E.rank() == 2 && E.isFloating(), "multiHopEdgeBias: table must be a float [V, H], got ",
                dtypeName(E.dtype()), " ", shapeString(E.shape()));
  const int64_t V = E.dim(0), H = E.dim(1);
  GNN_CHECK_ARG(W.rank() == 3 && W.dim(1) == H && W.dim(2) == H && W.dim(0) >= 1 && W.dtype() == E.dtype(),
                "multiHopEdgeBias: hopWeights must be ", dtypeName(E.dtype()), " [K, ", H, ", ", H, "], got ",
                dtypeName(W.dtype()), " ", shapeString(W.shape()));
  GNN_CHECK_ARG(edgeInput.dtype() == DType::I64 && edgeInput.rank() >= 2,
                "multiHopEdgeBias: edgeInput must be int64 "
                "[..., K, Fe], got ",
                dtypeName(edgeInput.dtype()), " ", shapeString(edgeInput.shape()));
  const int64_t K = W.dim(0), Kin = edgeInput.dim(-2), Fe = edgeInput.dim(-1);
  GNN_CHECK_ARG(Kin >= K && Fe >= 1, "multiHopEdgeBias: edgeInput ", shapeString(edgeInput.shape()),
                " holds ", Kin, " hops, fewer than the ", K,
                " hop weights (build the encodings with multi_hop_max_dist >= ", K, ")");
  const int64_t P = edgeInput.numel() / (Kin * Fe);
  GNN_CHECK_ARG(spatialPos.dtype() == DType::I64 && spatialPos.numel() == P,
                "multiHopEdgeBias: spatialPos must be "
                "int64 with ",
                P, " elements (one per pair of edgeInput ", shapeString(edgeInput.shape()), "), got ",
                dtypeName(spatialPos.dtype()), " ", shapeString(spatialPos.shape()));
  const int64_t* ei = edgeInput.data<int64_t>();
  // edgeInput is the largest input (P x K' x Fe int64: 7 MB for 64 molecules of 30 atoms over 5 hops), so its
  // values are checked in the forward's own pass over it (out-of-range values are skipped there, never read
  // through), and the offending element is looked for, and reported, only when that pass saw one.
  const auto reportBadValue = [&] {
    for (int64_t n = 0; n < edgeInput.numel(); ++n)
      GNN_CHECK_ARG(ei[n] >= -1 && ei[n] < V, "multiHopEdgeBias: edgeInput value ", ei[n], " at pair ",
                    n / (Kin * Fe), " hop ", (n / Fe) % Kin, " feature ", n % Fe, " is outside [-1, ", V, ")");
  };
  // Hops at or beyond K are not read below; their values are checked here (Kin > K only).
  for (int64_t pair = 0; Kin > K && pair < P; ++pair)
    for (int64_t n = (pair * Kin + K) * Fe; n < (pair + 1) * Kin * Fe; ++n)
      if (ei[n] < -1 || ei[n] >= V) reportBadValue();
  const int64_t* sp = spatialPos.data<int64_t>();
  return dispatchFloat(E.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    // Linear in the table rows: sum_k mean_f(E[h_kf]) W_k = (1 / Fe) sum_k sum_f (E W_k)[h_kf]. So the V x K
    // products E W_k are formed once ([K, V, H], small: V is the edge vocabulary) and each pair only adds K x Fe
    // of their rows, instead of a mean and an H x H product per hop.
    Tensor EW = Tensor::empty({K, V, H}, E.dtype());
    hopProducts<T>(E.data<T>(), W.data<T>(), K, V, H, EW.data<T>());
    Tensor Y = Tensor::empty({P, H}, E.dtype());
    const HopShape shape{P, K, Kin, Fe, V, H};
    if (sumHopRows<T>(EW.data<T>(), ei, sp, shape, Y.data<T>())) reportBadValue();
    const int64_t elem = static_cast<int64_t>(sizeof(T));
    OpInfo info{"multiHopEdgeBias", K * V * H * H + P * K * Fe * H,
                static_cast<int64_t>(edgeInput.nbytes() + spatialPos.nbytes() + E.nbytes() + W.nbytes()),
                P * H * elem, P * K * Fe * H + 2 * K * V * H * H};
    return Variable::record(
        info, Y, {table, hopWeights}, {E, W, edgeInput, spatialPos},
        [shape](const Tensor& gy, std::vector<GradInput>& in, const std::vector<Tensor>& saved) {
          const int64_t K = shape.K, V = shape.V, H = shape.H;
          const T* ep = saved[0].data<T>();
          const T* wp = saved[1].data<T>();
          const bool needTable = in[0].requiresGrad(), needW = in[1].requiresGrad();
          Tensor S = hopRowGradients<T>(gy, saved[2].data<int64_t>(), saved[3].data<int64_t>(), shape);
          const T* sv = S.data<T>();
          if (needTable) {
            Tensor GT = Tensor::empty({V, H}, gy.dtype());
            tableGradient<T>(sv, wp, K, V, H, GT.data<T>());
            in[0].addGrad(GT);
          }
          if (needW) {
            Tensor GW = Tensor::zeros({K, H, H}, gy.dtype());
            hopWeightGradient<T>(ep, sv, K, V, H, GW.data<T>());
            in[1].addGrad(GW);
          }
        });
  });
}

}  // namespace gnn
